package log

import (
	"errors"
	"fmt"
	"path/filepath"
)

// DirCleanResult is the outcome of one log's cleaning in Dir.Clean.
type DirCleanResult struct {
	Topic     string
	Partition int32
	CleanResult
}

// Clean runs one pass of the log cleaner over the data dir: every log whose
// cleanup policy includes compact and that is eligible is compacted (see
// Log.Clean), and the cleaner-offset-checkpoint file is rewritten when any
// was. limit gives each log's first offset that may not be compacted, its
// high watermark; a log for which ok is false (not hosted as a partition
// right now) is skipped. A failing log does not stop the others; their
// errors are joined. Cleanings aborted by a concurrent change are not errors.
func (d *Dir) Clean(limit func(l *Log) (offset int64, ok bool), maxMapBytes int64) ([]DirCleanResult, error) {
	var out []DirCleanResult
	var errs []error
	for _, l := range d.Logs() {
		if !l.Config().Compact {
			continue
		}
		lim, ok := limit(l)
		if !ok {
			continue
		}
		res, err := l.Clean(CleanOptions{Limit: lim, MaxMapBytes: maxMapBytes})
		switch {
		case errors.Is(err, ErrCleanAborted), errors.Is(err, ErrClosed):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		if res.Cleaned {
			out = append(out, DirCleanResult{Topic: l.topic, Partition: l.partition, CleanResult: res})
		}
	}
	if len(out) > 0 {
		d.cpMu.Lock()
		err := d.health.offline()
		if err == nil {
			if err = d.writeCleanerCheckpoint(); err != nil {
				err = d.health.fail(err)
			}
		}
		d.cpMu.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// writeCleanerCheckpoint writes every compacted log's cleaner checkpoint in
// Kafka's cleaner-offset-checkpoint format. The caller holds cpMu.
func (d *Dir) writeCleanerCheckpoint() error {
	points := map[partitionKey]int64{}
	for _, l := range d.Logs() {
		l.mu.RLock()
		if l.cleanedTo > 0 {
			points[partitionKey{l.topic, l.partition}] = l.cleanedTo
		}
		l.mu.RUnlock()
	}
	if err := writeOffsetsCheckpoint(d.opts.FS, filepath.Join(d.path, cleanerOffsetFile), points); err != nil {
		return fmt.Errorf("log: cleaner checkpoint: %w", err)
	}
	return nil
}
