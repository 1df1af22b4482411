package partition

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/record"
)

// Producer snapshots are files of the log's directory written through the
// log's file system: a failed write, fsync, rename or removal of one takes the
// data dir offline exactly as a failed segment write does (Kafka hands the
// IOException of ProducerStateManager to its LogDirFailureChannel). A snapshot
// that may not be on disk cannot be trusted, and one that could not be removed
// would be read again as valid once the log grows past its offset.

const snapshotSuffix = ".snapshot"

func snapshotName(offset int64) string { return fmt.Sprintf("%020d%s", offset, snapshotSuffix) }

// writeSnapshotLocked writes <logEndOffset>.snapshot atomically and removes
// older snapshots but the previous one.
func (p *Partition) writeSnapshotLocked() error {
	if err := p.log.Offline(); err != nil {
		return fmt.Errorf("partition: %s-%d: write producer snapshot: %w: %w", p.Topic, p.Index, ErrStorage, err)
	}
	if err := p.writeSnapshotFilesLocked(); err != nil {
		return fmt.Errorf("partition: %s-%d: write producer snapshot: %w: %w", p.Topic, p.Index, ErrStorage, p.log.Fail(err))
	}
	p.snapDirty = false
	return nil
}

func (p *Partition) writeSnapshotFilesLocked() error {
	fsys, dir := p.log.FS(), p.log.Path()
	final := filepath.Join(dir, snapshotName(p.log.LogEndOffset()))
	tmp := final + ".tmp"
	if err := vfs.WriteFileSync(fsys, tmp, p.producers.marshal()); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, final); err != nil {
		return err
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return err
	}
	offs, err := listSnapshots(fsys, dir)
	if err != nil {
		return err
	}
	for i := 0; i+2 < len(offs); i++ {
		if err := removeSnapshot(fsys, filepath.Join(dir, snapshotName(offs[i]))); err != nil {
			return err
		}
	}
	return nil
}

func removeSnapshot(fsys vfs.FS, path string) error {
	if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// listSnapshots returns the offsets of the snapshot files in dir, ascending.
func listSnapshots(fsys vfs.FS, dir string) ([]int64, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var offs []int64
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, snapshotSuffix) || len(name) != 20+len(snapshotSuffix) {
			continue
		}
		off, err := strconv.ParseInt(strings.TrimSuffix(name, snapshotSuffix), 10, 64)
		if err == nil {
			offs = append(offs, off)
		}
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	return offs, nil
}

// loadProducerState restores producer state from the newest readable
// snapshot at or below the log end offset, then replays the batches after it.
// A snapshot beyond the log end (the log was truncated) or a corrupt one is
// removed and an older one, or the whole log, is replayed instead.
func (p *Partition) loadProducerState() error {
	fsys, dir := p.log.FS(), p.log.Path()
	leo := p.log.LogEndOffset()
	state, from := newProducerState(), p.log.LogStartOffset()
	offs, err := listSnapshots(fsys, dir)
	if err != nil {
		return p.failLoad(err)
	}
	for i := len(offs) - 1; i >= 0; i-- {
		path := filepath.Join(dir, snapshotName(offs[i]))
		if offs[i] > leo {
			if err := removeSnapshot(fsys, path); err != nil {
				return p.failLoad(err)
			}
			continue
		}
		data, err := vfs.ReadFile(fsys, path)
		if err == nil {
			var s *producerState
			if s, err = unmarshalProducerState(data); err == nil {
				state, from = s, offs[i]
				break
			}
		}
		p.logger.Warn("ignoring unreadable producer snapshot", "file", path, "err", err)
		if err := removeSnapshot(fsys, path); err != nil {
			return p.failLoad(err)
		}
	}
	if from < p.log.LogStartOffset() {
		from = p.log.LogStartOffset()
	}
	err = p.log.Scan(from, func(h record.Header, batch []byte) error {
		if h.LastOffset() < from {
			return nil
		}
		// The index entry of an abort may not have reached the disk before
		// a crash; adding it again is a no-op otherwise.
		return replayBatch(state, p.log, h, batch)
	})
	if err != nil {
		return fmt.Errorf("partition: %s-%d: replay producer state: %w", p.Topic, p.Index, err)
	}
	p.producers = state
	p.snapDirty = true
	return nil
}

// failLoad takes the data dir offline after a snapshot file could not be
// listed or removed while loading producer state.
func (p *Partition) failLoad(err error) error {
	return fmt.Errorf("partition: %s-%d: load producer snapshots: %w: %w", p.Topic, p.Index, ErrStorage, p.log.Fail(err))
}
