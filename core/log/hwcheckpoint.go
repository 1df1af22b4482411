package log

import (
	"fmt"
	"path/filepath"
)

// The replication-offset-checkpoint is Kafka's data-dir-level record of each
// partition's high watermark. A replica that restarts takes its high
// watermark from it (bounded by its log end) instead of its log end offset,
// so that records never confirmed by the ISR stay invisible until the ISR
// confirms them again. The log only keeps the number: the partition decides
// what the high watermark is and records it with SetHighWatermark.

// HighWatermark returns the high watermark last recorded for this log, by
// SetHighWatermark or from the data dir's replication-offset-checkpoint when
// the log was opened; ok is false when none is known.
func (l *Log) HighWatermark() (hw int64, ok bool) {
	hw = l.hw.Load()
	return hw, hw >= 0
}

// SetHighWatermark records the partition's high watermark for the next
// replication-offset-checkpoint. A negative value forgets it. It takes no
// lock, so callers may record every move of the high watermark.
func (l *Log) SetHighWatermark(hw int64) {
	if hw < 0 {
		hw = -1
	}
	l.hw.Store(hw)
}

// CheckpointHighWatermarks writes every log's recorded high watermark to the
// data dir's replication-offset-checkpoint, atomically (Kafka writes it every
// replica.high.watermark.checkpoint.interval.ms and at shutdown). Logs with
// no recorded high watermark are left out. Checkpoint writes it too.
func (d *Dir) CheckpointHighWatermarks() error {
	d.cpMu.Lock()
	defer d.cpMu.Unlock()
	if err := d.health.offline(); err != nil {
		return err
	}
	if err := d.writeHighWatermarksLocked(); err != nil {
		return d.health.fail(err)
	}
	return nil
}

// writeHighWatermarksLocked writes the replication-offset-checkpoint. The
// caller holds cpMu.
func (d *Dir) writeHighWatermarksLocked() error {
	hws := map[partitionKey]int64{}
	for _, l := range d.Logs() {
		if hw, ok := l.HighWatermark(); ok {
			hws[partitionKey{l.topic, l.partition}] = hw
		}
	}
	if err := writeOffsetsCheckpoint(d.opts.FS, filepath.Join(d.path, replicationOffsetFile), hws); err != nil {
		return fmt.Errorf("log: high watermark checkpoint: %w", err)
	}
	return nil
}
