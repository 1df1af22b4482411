// Package replication owns the data plane between a partition's replicas:
// follower fetchers (one per source broker) that copy a leader's batches as
// they are and truncate a diverged log by leader epochs, the leader's ISR
// decisions (shrink after replica.lag.time.max.ms, expand when a follower
// has caught up) sent to the controller, the acks=all wait for the high
// watermark, and the replication throttle (Kafka's leader and follower
// replication quotas, measured on an injected clock). It uses partition for
// the replica state and kmsg for the wire; it never changes metadata itself
// and never imports the protocol handlers.
package replication
