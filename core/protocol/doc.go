// Package protocol owns the Kafka wire edge: length-prefixed frames, request
// headers, the registry of API handlers with their version ranges, and serving
// a connection so that responses leave in request order. It decodes with
// franz-go's kmsg/kbin and imports no other core package; what a request means
// is decided by the handlers registered with it.
package protocol
