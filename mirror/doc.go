// Package mirror owns cluster-to-cluster replication: it copies selected
// topics from a source cluster to a target cluster, creates and grows the
// target topics, keeps their configs and ACLs in step, translates consumer
// group offsets (checkpoints, and commits into idle target groups) and
// writes heartbeats, with MirrorMaker 2's topic names and record formats.
//
// Two modes: "copy" re-produces records through an idempotent producer to
// any Kafka cluster, recording offset syncs from which translation is exact;
// "link" copies record batches byte for byte so that target offsets equal
// source offsets and failover needs no translation; a Gregor target keeps
// link topics read-only (the gregor.mirror.link topic config) and appends
// the link's batches at their own offsets, gaps and transaction markers
// included, until the topic is promoted. A copy-mode topic whose existing
// target has another partition count (larger, or smaller with
// topics.grow_partitions = false) is copied through the default
// partitioner instead, its group offsets left untranslated
// (repartition.go); link mode refuses it.
//
// A mirror resumes from what the target holds: after a crash it pairs the
// records written since its last offset sync with their source records, so
// nothing is lost or written twice. Records the source deleted before they
// were mirrored are reported, never skipped silently.
//
// It is a client of both clusters and must not reach into a broker's
// internals; it runs standalone (gregor mirror) or inside a broker from
// [mirror.NAME] sections of broker.toml.
package mirror
