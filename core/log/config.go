package log

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// Config is the per-log configuration; the caller derives it from broker and
// topic settings. Field names follow Kafka's topic configs.
type Config struct {
	// SegmentBytes (segment.bytes) is the size at which a segment is rolled.
	SegmentBytes int64
	// SegmentMs (segment.ms) rolls a segment whose first batch is older than
	// this, measured against the timestamp of the batch being appended (or the
	// clock when the segment's batches carry no timestamp).
	SegmentMs int64
	// IndexIntervalBytes (index.interval.bytes) is the bytes appended between
	// offset index entries.
	IndexIntervalBytes int32
	// RetentionMs (retention.ms) deletes segments whose newest timestamp is
	// older than this; -1 keeps them forever.
	RetentionMs int64
	// RetentionBytes (retention.bytes) deletes the oldest segments while the
	// log exceeds this size; -1 means no limit.
	RetentionBytes int64
	// MaxIndexBytes (segment.index.bytes) bounds each index file; a segment
	// whose index is full is rolled.
	MaxIndexBytes int32
	// Delete (cleanup.policy contains "delete") lets RetentionMs and
	// RetentionBytes delete old segments.
	Delete bool
	// Compact (cleanup.policy contains "compact") lets the cleaner keep only
	// the latest record of each key; see Log.Clean.
	Compact bool
	// DeleteRetentionMs (delete.retention.ms) is how long a compacted log
	// keeps a tombstone after the cleaner first saw it.
	DeleteRetentionMs int64
	// MinCleanableDirtyRatio (min.cleanable.dirty.ratio) is the share of
	// not yet compacted bytes above which the log is compacted.
	MinCleanableDirtyRatio float64
	// MinCompactionLagMs (min.compaction.lag.ms) keeps segments holding
	// records younger than this out of compaction.
	MinCompactionLagMs int64
	// MaxCompactionLagMs (max.compaction.lag.ms) forces compaction of a log
	// whose oldest uncompacted record is older than this, whatever its
	// dirty ratio.
	MaxCompactionLagMs int64
	// FlushMessages (flush.messages) makes an append fsync the log before it
	// returns once this many offsets past the recovery point are unflushed;
	// math.MaxInt64 (Kafka's default) leaves flushing to the OS.
	FlushMessages int64
	// FlushMs (flush.ms) makes FlushIfDue fsync a log whose oldest unflushed
	// append is at least this old; math.MaxInt64 (Kafka's default) never.
	FlushMs int64
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:       1 << 30,
		SegmentMs:          7 * 24 * 60 * 60 * 1000,
		IndexIntervalBytes: 4096,
		RetentionMs:        7 * 24 * 60 * 60 * 1000,
		RetentionBytes:     -1,
		MaxIndexBytes:      10 << 20,

		Delete:                 true,
		DeleteRetentionMs:      24 * 60 * 60 * 1000,
		MinCleanableDirtyRatio: 0.5,
		MinCompactionLagMs:     0,
		MaxCompactionLagMs:     math.MaxInt64,
		FlushMessages:          math.MaxInt64,
		FlushMs:                math.MaxInt64,
	}
}

// Validate reports the first setting outside its legal range.
func (c Config) Validate() error {
	switch {
	case c.SegmentBytes < 14:
		return fmt.Errorf("log: segment bytes %d is below the minimum 14", c.SegmentBytes)
	case c.SegmentBytes > 1<<31-1:
		return fmt.Errorf("log: segment bytes %d exceeds the maximum %d", c.SegmentBytes, 1<<31-1)
	case c.SegmentMs < 1:
		return fmt.Errorf("log: segment ms %d is below the minimum 1", c.SegmentMs)
	case c.FlushMessages < 1:
		return fmt.Errorf("log: flush messages %d is below the minimum 1", c.FlushMessages)
	case c.FlushMs < 0:
		return fmt.Errorf("log: flush ms %d is below the minimum 0", c.FlushMs)
	case c.IndexIntervalBytes < 0:
		return fmt.Errorf("log: index interval bytes %d is negative", c.IndexIntervalBytes)
	case c.RetentionMs < -1:
		return fmt.Errorf("log: retention ms %d is below -1", c.RetentionMs)
	case c.RetentionBytes < -1:
		return fmt.Errorf("log: retention bytes %d is below -1", c.RetentionBytes)
	case c.DeleteRetentionMs < 0:
		return fmt.Errorf("log: delete retention ms %d is negative", c.DeleteRetentionMs)
	case !(c.MinCleanableDirtyRatio >= 0 && c.MinCleanableDirtyRatio <= 1):
		return fmt.Errorf("log: min cleanable dirty ratio %v is outside [0, 1]", c.MinCleanableDirtyRatio)
	case c.MinCompactionLagMs < 0:
		return fmt.Errorf("log: min compaction lag ms %d is negative", c.MinCompactionLagMs)
	case c.MaxCompactionLagMs < 1:
		return fmt.Errorf("log: max compaction lag ms %d is below the minimum 1", c.MaxCompactionLagMs)
	case c.MaxIndexBytes < timeEntrySize:
		return fmt.Errorf("log: max index bytes %d is below the minimum %d", c.MaxIndexBytes, timeEntrySize)
	}
	return nil
}

// Options are the process-level dependencies of logs.
type Options struct {
	// Now is the clock for segment rolling and retention; nil means time.Now.
	Now func() time.Time
	// Logger receives warnings about repairs; nil means slog.Default().
	Logger *slog.Logger
	// FS is the file system the logs live on; nil means the operating
	// system's. Tests inject faults through it (vfs/errorfs).
	FS vfs.FS
	// OnOffline, when set, is called once when a write or fsync error takes
	// a data dir offline (Kafka's LogDirFailureChannel), so that the broker
	// can tell the controller and move leadership away. It must not call
	// back into the log; it runs on a goroutine of its own.
	OnOffline func(dir string, err error)
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	return o
}
