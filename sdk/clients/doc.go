// Package clients holds adapters that run a Gregor partitioner inside
// ordinary Kafka producers, so a client places records exactly where the
// broker's placement check and produce-over-HTTP would:
//
//   - kafkago.Balancer is a segmentio/kafka-go kafka.Balancer.
//   - franzgo.Partitioner is a franz-go kgo.Partitioner.
//
// Both take the sdk contract partitioner.BatchPartitioner. To run the same
// WebAssembly module the broker runs, pass a *hooks.Partitioner (the
// broker's WebAssembly host, github.com/gregorbroker/gregor/hooks), so the
// module is checked, limited and pooled exactly as in the broker. This
// module imports nothing of the broker: it depends on the sdk and the two
// Kafka clients only, and the sdk's contracts stay free of any Kafka
// client.
//
// A producer cannot wait for an error: when the module fails, the adapters
// place the record by Kafka's default rule (murmur2 of the key, null keys
// round-robin) and report the error to the OnError callback, if any.
package clients
