// Package broker owns the partitions hosted on this node and their
// lifecycle: which replicas are open, whether each leads or follows, their
// configs, the replication throttles, and which __consumer_offsets and
// __transaction_state partitions the coordinators load. All of it follows
// the controller's metadata image.
//
// One goroutine, Run, applies the images: it opens and deletes partitions,
// makes them leaders or followers, applies topic configs and throttles and
// hands the coordinators the partitions led here. No other goroutine
// changes the set; request handlers only look partitions up (Partition).
// A handler that needs the effect of a metadata write it just made (a
// topic it created, a config it altered) waits with WaitImage until the
// applier has applied at least the image that holds the write; it shares
// no lock with the applier beyond that wait.
//
// The package also holds the produce policy that Kafka Produce and
// produce over HTTP share: leadership admission (Admit), the read-only rule
// of mirror-link topics (CheckMirrorLink), the placement check and produce
// interceptor (CheckProduced) and the acks=all wait (AckWait). The
// policy's refusals come with the Kafka error code both edges answer with;
// every other error is left to the caller to map.
//
// Ownership: the set of partitions and the coordinators' assignments are
// changed only by the applier goroutine (Open before it starts, then Run);
// the applier's mutex guards only the applied offset and the waiters;
// internalTopicMu serialises internal-topic creation among handlers and is
// never held by the applier.
//
// broker must not import core/api, core/httpapi or core/server: they call
// it, not the other way round.
package broker
