// Package mirror will replicate topics, configs and consumer offsets between
// clusters. It is empty until the mirror lands.
package mirror
