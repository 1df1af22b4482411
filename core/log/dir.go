package log

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
)

// Directory name suffixes Kafka gives partition directories in transition.
const (
	deleteDirSuffix = "-delete"
	futureDirSuffix = "-future"
	strayDirSuffix  = "-stray"
	// metadataTopic is KRaft's metadata log, which lives in a data dir but
	// is not a partition log.
	metadataTopic = "__cluster_metadata"
	maxTopicLen   = 249
)

// Dir is every partition log under one data directory. It owns the
// data-dir-level checkpoint files and the clean-shutdown marker.
type Dir struct {
	path      string
	opts      Options
	configFor func(topic string, partition int32) Config

	// health is shared by every log of the dir; see dirHealth.
	health *dirHealth

	// brokerEpoch is recorded in the clean-shutdown marker (atomic).
	brokerEpoch atomic.Int64
	// cpMu serialises checkpoint writes.
	cpMu sync.Mutex
	// mu guards logs and closed.
	mu     sync.Mutex
	logs   map[partitionKey]*Log
	closed bool
}

// OpenDir opens every <topic>-<partition> directory under path, creating path
// if needed. After an unclean shutdown (no clean-shutdown marker) each log is
// recovered from its checkpointed recovery point. Directories being deleted
// are removed. configFor supplies each log's configuration; nil means
// DefaultConfig.
func OpenDir(path string, opts Options, configFor func(topic string, partition int32) Config) (*Dir, error) {
	opts = opts.withDefaults()
	fsys := opts.FS
	if configFor == nil {
		configFor = func(string, int32) Config { return DefaultConfig() }
	}
	if err := fsys.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("log: data dir: %w", err)
	}
	entries, err := fsys.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("log: data dir: %w", err)
	}
	d := &Dir{path: path, opts: opts, configFor: configFor, logs: map[partitionKey]*Log{},
		health: &dirHealth{path: path, onOffline: opts.OnOffline}}
	d.brokerEpoch.Store(-1)

	marker := filepath.Join(path, cleanShutdownFile)
	_, err = fsys.Lstat(marker)
	clean := err == nil
	recoveryPoints := d.readOffsets(recoveryPointFile)
	logStarts := d.readOffsets(logStartOffsetFile)
	cleanerPoints := d.readOffsets(cleanerOffsetFile)
	highWatermarks := d.readOffsets(replicationOffsetFile)

	for _, e := range entries {
		name := e.Name()
		full := filepath.Join(path, name)
		if !e.IsDir() {
			continue
		}
		switch {
		case strings.HasSuffix(name, deleteDirSuffix):
			opts.Logger.Warn("log: removing partition directory marked for deletion", "path", full)
			if err := fsys.RemoveAll(full); err != nil {
				d.closeLogs()
				return nil, fmt.Errorf("log: remove %s: %w", full, err)
			}
			continue
		case strings.HasSuffix(name, futureDirSuffix) || strings.HasSuffix(name, strayDirSuffix):
			opts.Logger.Warn("log: ignoring partition directory in transition", "path", full)
			continue
		}
		topic, partition, err := parsePartitionDir(name)
		if err != nil && strings.HasPrefix(name, ReservedDirPrefix) {
			continue // the broker's own state, such as the metadata quorum
		}
		if err != nil {
			opts.Logger.Warn("log: ignoring directory that is not a partition log", "path", full, "reason", err.Error())
			continue
		}
		if topic == metadataTopic {
			continue
		}
		k := partitionKey{topic, partition}
		rp, ok := recoveryPoints[k]
		st := loadState{recoveryPoint: rp, logStart: logStarts[k], clean: clean && ok, health: d.health}
		cfg := configFor(topic, partition)
		if err := cfg.Validate(); err != nil {
			d.closeLogs()
			return nil, fmt.Errorf("log: open %s: %w", full, err)
		}
		l, err := openLog(full, topic, partition, cfg, opts, st)
		if err != nil {
			d.closeLogs()
			return nil, fmt.Errorf("log: open %s: %w", full, err)
		}
		l.cleanedTo = cleanerPoints[k]
		if hw, ok := highWatermarks[k]; ok {
			l.hw.Store(hw)
		}
		d.logs[k] = l
	}
	if !clean && len(d.logs) > 0 {
		opts.Logger.Warn("log: no clean shutdown marker; recovered logs from their recovery points", "dir", path, "logs", len(d.logs))
	}
	// From here on a crash is an unclean shutdown.
	if clean {
		if err := fsys.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.closeLogs()
			return nil, fmt.Errorf("log: remove clean shutdown marker: %w", err)
		}
		if err := syncDir(fsys, path); err != nil {
			d.closeLogs()
			return nil, err
		}
	}
	if err := d.Checkpoint(); err != nil {
		d.closeLogs()
		return nil, err
	}
	return d, nil
}

// readOffsets reads a data-dir checkpoint; a damaged one is logged and
// treated as absent, which makes recovery conservative.
func (d *Dir) readOffsets(name string) map[partitionKey]int64 {
	m, err := readOffsetsCheckpoint(d.opts.FS, filepath.Join(d.path, name))
	if err != nil {
		d.opts.Logger.Warn("log: ignoring unreadable checkpoint", "file", name, "reason", err.Error())
		return map[partitionKey]int64{}
	}
	return m
}

// parsePartitionDir splits "<topic>-<partition>".
func parsePartitionDir(name string) (string, int32, error) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, fmt.Errorf("log: %q is not <topic>-<partition>", name)
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 || name[i+1:] != strconv.FormatInt(p, 10) {
		return "", 0, fmt.Errorf("log: %q has no valid partition number", name)
	}
	topic := name[:i]
	if err := validTopic(topic); err != nil {
		return "", 0, err
	}
	return topic, int32(p), nil
}

// validTopic applies Kafka's topic name rules.
func validTopic(topic string) error {
	if topic == "" || topic == "." || topic == ".." || len(topic) > maxTopicLen {
		return fmt.Errorf("log: invalid topic name %q", topic)
	}
	for _, c := range topic {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("log: invalid topic name %q: character %q", topic, c)
		}
	}
	return nil
}

// Path returns the data directory.
func (d *Dir) Path() string { return d.path }

// Log returns the log of a partition if this data dir holds it.
func (d *Dir) Log(topic string, partition int32) (*Log, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l, ok := d.logs[partitionKey{topic, partition}]
	return l, ok
}

// Logs returns every log, sorted by topic and partition.
func (d *Dir) Logs() []*Log {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*Log, 0, len(d.logs))
	for _, l := range d.logs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].partition < out[j].partition
	})
	return out
}

// Create returns the partition's log, creating an empty one if it does not
// exist yet.
func (d *Dir) Create(topic string, partition int32, cfg Config) (*Log, error) {
	if err := validTopic(topic); err != nil {
		return nil, err
	}
	if partition < 0 {
		return nil, fmt.Errorf("log: invalid partition %d", partition)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if err := d.health.offline(); err != nil {
		return nil, err
	}
	k := partitionKey{topic, partition}
	if l, ok := d.logs[k]; ok {
		return l, nil
	}
	dir := filepath.Join(d.path, fmt.Sprintf("%s-%d", topic, partition))
	if err := d.opts.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("log: create %s: %w", dir, err)
	}
	if err := syncDir(d.opts.FS, d.path); err != nil {
		return nil, err
	}
	l, err := openLog(dir, topic, partition, cfg, d.opts, loadState{clean: true, health: d.health})
	if err != nil {
		return nil, fmt.Errorf("log: create %s: %w", dir, err)
	}
	d.logs[k] = l
	return l, nil
}

// Delete removes a partition's log: it is closed, its directory renamed to
// <topic>-<partition>.<uuid>-delete (so a crash midway finishes the deletion
// at the next start) and then removed.
func (d *Dir) Delete(topic string, partition int32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := partitionKey{topic, partition}
	l, ok := d.logs[k]
	if !ok {
		return nil
	}
	delete(d.logs, k)
	l.flushMu.Lock()
	l.mu.Lock()
	l.closeFiles()
	l.mu.Unlock()
	l.flushMu.Unlock()

	suffix := "." + strings.ReplaceAll(uuid.NewString(), "-", "") + deleteDirSuffix
	part := "-" + strconv.Itoa(int(partition))
	keep := min(len(topic), 255-len(suffix)-len(part))
	target := filepath.Join(d.path, topic[:keep]+part+suffix)
	if err := d.opts.FS.Rename(l.dir, target); err != nil {
		return fmt.Errorf("log: delete %s: %w", l.dir, err)
	}
	if err := syncDir(d.opts.FS, d.path); err != nil {
		return err
	}
	if err := d.opts.FS.RemoveAll(target); err != nil {
		return fmt.Errorf("log: delete %s: %w", target, err)
	}
	return nil
}

// Checkpoint writes every log's recovery point, log start offset, cleaner
// checkpoint and high watermark to the data dir's checkpoint files.
func (d *Dir) Checkpoint() error {
	d.cpMu.Lock()
	defer d.cpMu.Unlock()
	if err := d.health.offline(); err != nil {
		return err
	}
	if err := d.checkpointLocked(); err != nil {
		return d.health.fail(err)
	}
	return nil
}

func (d *Dir) checkpointLocked() error {
	rps, starts := map[partitionKey]int64{}, map[partitionKey]int64{}
	for _, l := range d.Logs() {
		l.mu.RLock()
		if len(l.segs) > 0 {
			k := partitionKey{l.topic, l.partition}
			rps[k], starts[k] = l.recoveryPoint, l.logStart
		}
		l.mu.RUnlock()
	}
	if err := writeOffsetsCheckpoint(d.opts.FS, filepath.Join(d.path, recoveryPointFile), rps); err != nil {
		return err
	}
	if err := writeOffsetsCheckpoint(d.opts.FS, filepath.Join(d.path, logStartOffsetFile), starts); err != nil {
		return err
	}
	if err := d.writeHighWatermarksLocked(); err != nil {
		return err
	}
	return d.writeCleanerCheckpoint()
}

// Close flushes and closes every log, writes the checkpoints and, if all of
// that succeeded, the clean-shutdown marker that lets the next start skip
// recovery.
func (d *Dir) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	var errs []error
	for _, l := range d.Logs() {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := d.Checkpoint(); err != nil {
		errs = append(errs, err)
	}
	// An offline dir gets no clean-shutdown marker: the next start recovers
	// every log from its last good recovery point.
	if err := d.health.offline(); err != nil && len(errs) == 0 {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return writeAtomic(d.opts.FS, filepath.Join(d.path, cleanShutdownFile), d.cleanShutdownMarker())
}

func (d *Dir) closeLogs() {
	for _, l := range d.logs {
		l.mu.Lock()
		l.closeFiles()
		l.mu.Unlock()
	}
}
