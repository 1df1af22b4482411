// Package extension is the broker's side of its extension points: the
// partitioners, retention policies and record interceptors declared in
// broker.toml by name, the pick of one per topic through the topic configs
// gregor.partitioner, gregor.retention.policy and
// gregor.interceptor.produce, the fallback rules when an extension fails
// (an interceptor's on_error policy and time limit among them), and what is
// built on them: the one decoding of a produced record set, the placement
// check and the interception of produced records, and the retention round
// of a partition.
//
// It sees extensions only through the sdk contracts. It must not import the
// WebAssembly or go-plugin hosts: the caller opens the extensions and hands
// them in.
package extension
