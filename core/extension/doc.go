// Package extension is the broker's side of its extension points: the
// partitioners and retention policies declared in broker.toml by name, the
// pick of one per topic through the topic configs gregor.partitioner and
// gregor.retention.policy, the fallback rules when an extension fails, and
// what is built on them: the placement check of produced records and the
// retention round of a partition.
//
// It sees extensions only through the sdk contracts. It must not import the
// WebAssembly or go-plugin hosts: the caller opens the extensions and hands
// them in.
package extension
