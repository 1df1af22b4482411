// Package api answers Kafka requests: one file per API key, each registering
// its handler and version range in init. It reads the controller's metadata
// image and the partitions hosted here, and chooses Kafka error codes at this
// edge. It holds no state of its own beyond what the Broker struct wires in.
package api
