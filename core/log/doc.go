// Package log owns a broker's partition logs on disk in Apache Kafka's format,
// byte for byte: segments of v2 batches (.log) with sparse offset (.index) and
// time (.timeindex) indexes, the leader-epoch-checkpoint of each partition, and
// the data-dir-level recovery-point, log-start-offset and
// replication-offset (high watermark) checkpoints with the clean-shutdown
// marker.
//
// It appends already-validated batches (assigning offsets), reads whole batches
// by offset, looks up offsets by timestamp, recovers torn tails after a crash,
// rebuilds damaged indexes, deletes whole segments for retention,
// DeleteRecords and follower truncation, and compacts logs whose cleanup
// policy includes compact (keeping the latest record of each key, with the
// cleaner-offset-checkpoint at data-dir level).
//
// Every file operation goes through a vfs.FS (core/log/vfs; the operating
// system's unless Options.FS says otherwise, which tests use to inject faults
// with vfs/errorfs). A write or fsync error takes the whole data dir offline
// for good (Kafka's LogDirFailureChannel): its logs answer ErrStorage until a
// restart recovers them.
//
// It must not decide who may write (leadership, high watermark, producer state):
// callers bound reads with the high watermark and choose what to append. It
// imports no other core package except record and its own vfs.
package log

// ReservedDirPrefix starts the names of directories in a data dir that belong
// to the broker rather than to a partition (the metadata quorum's store).
// Such a name has no "-<partition>" suffix, so it can never be a partition
// directory; OpenDir skips it without a warning.
const ReservedDirPrefix = "__gregor_"
