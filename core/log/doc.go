// Package log owns a broker's partition logs on disk in Apache Kafka's format,
// byte for byte: segments of v2 batches (.log) with sparse offset (.index) and
// time (.timeindex) indexes, the leader-epoch-checkpoint of each partition, and
// the data-dir-level recovery-point and log-start-offset checkpoints with the
// clean-shutdown marker.
//
// It appends already-validated batches (assigning offsets), reads whole batches
// by offset, looks up offsets by timestamp, recovers torn tails after a crash,
// rebuilds damaged indexes, and deletes whole segments for retention,
// DeleteRecords and follower truncation.
//
// It must not decide who may write (leadership, high watermark, producer state):
// callers bound reads with the high watermark and choose what to append. It
// imports no other core package except record.
package log
