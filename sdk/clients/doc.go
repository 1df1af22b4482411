// Package clients holds adapters that run a Gregor WebAssembly partitioner
// inside ordinary Kafka producers, so a client places records exactly where
// the broker's placement check and produce-over-HTTP would:
//
//   - kafkago.Balancer is a segmentio/kafka-go kafka.Balancer.
//   - franzgo.Partitioner is a franz-go kgo.Partitioner.
//
// Both wrap a *hooks.Partitioner, the broker's own WebAssembly host, so the
// module is checked, limited and pooled exactly as in the broker. This is a
// separate Go module so that the sdk's contracts stay free of wazero and of
// any Kafka client: a plugin author imports sdk, an application that wants
// client-side placement imports sdk/clients.
//
// A producer cannot wait for an error: when the module fails, the adapters
// place the record by Kafka's default rule (murmur2 of the key, null keys
// round-robin) and report the error to the OnError callback, if any.
package clients
