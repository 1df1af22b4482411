// Package extension is the broker's side of its extension points and the
// one home of their policy: the partitioners, retention policies,
// authenticators, authorizers and record interceptors declared in
// broker.toml by name, the pick of one per topic through the topic configs
// gregor.partitioner, gregor.retention.policy, gregor.interceptor.produce
// and gregor.interceptor.fetch (security.authorizer and
// security.sasl_mechanisms pick the others), and, the same for a
// WebAssembly module and a plugin process, what happens around every call:
// the time limit (CallTimeout), the statistics (calls, errors, fallbacks,
// latency), the throttled failure warning and the fallback (a partitioner's
// and a retention policy's builtin or reject, an interceptor's on_error,
// an authorizer's and an authenticator's reject). It also holds what is
// built on them: the one decoding of a produced record set, the placement
// check and the interception of produced and fetched records, and the retention round
// of a partition.
//
// It sees extensions only through the sdk contracts. It must not import the
// WebAssembly or go-plugin hosts (hooks, plugins): the loader opens the
// extensions and hands them in, and the hosts only load and call, returning
// their traps, crashes and timeouts as errors.
package extension
