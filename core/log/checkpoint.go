package log

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// Kafka's checkpoint files are text: a version line ("0"), a count line, then
// one entry per line with space-separated fields.
const checkpointVersion = 0

// Data-dir-level file names, as Kafka names them.
const (
	recoveryPointFile  = "recovery-point-offset-checkpoint"
	logStartOffsetFile = "log-start-offset-checkpoint"
	cleanShutdownFile  = ".kafka_cleanshutdown"
	leaderEpochFile    = "leader-epoch-checkpoint"
	cleanerOffsetFile  = "cleaner-offset-checkpoint"
	// replicationOffsetFile holds each partition's high watermark.
	replicationOffsetFile = "replication-offset-checkpoint"
)

// maxCheckpointBytes bounds the checkpoint files we read.
const maxCheckpointBytes = 64 << 20

// readCheckpoint parses a checkpoint file into entries of fields fields each.
// A missing file yields no entries and no error.
func readCheckpoint(fsys vfs.FS, path string, fields int) ([][]string, error) {
	f, err := vfs.Open(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	if st.Size() > maxCheckpointBytes {
		return nil, fmt.Errorf("%w: checkpoint %s: %d bytes is too large", ErrCorrupt, path, st.Size())
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return sc.Text(), true
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: checkpoint %s: %s", ErrCorrupt, path, fmt.Sprintf(format, args...))
	}
	v, ok := line()
	if !ok {
		if sc.Err() != nil {
			return nil, bad("%v", sc.Err())
		}
		return nil, bad("empty file")
	}
	if strings.TrimSpace(v) != strconv.Itoa(checkpointVersion) {
		return nil, bad("unsupported version %q", v)
	}
	c, ok := line()
	n, err := strconv.Atoi(strings.TrimSpace(c))
	if !ok || err != nil || n < 0 {
		return nil, bad("malformed count %q", c)
	}
	var entries [][]string
	for i := 0; ; i++ {
		l, ok := line()
		if !ok {
			break
		}
		if strings.TrimSpace(l) == "" && i >= n {
			continue
		}
		parts := strings.Fields(l)
		if len(parts) != fields {
			return nil, bad("malformed line %q", l)
		}
		entries = append(entries, parts)
	}
	if sc.Err() != nil {
		return nil, bad("%v", sc.Err())
	}
	if len(entries) != n {
		return nil, bad("expected %d entries, found %d", n, len(entries))
	}
	return entries, nil
}

// writeCheckpoint atomically replaces a checkpoint file: write a temporary
// file, fsync it, rename it over the old one, fsync the directory.
func writeCheckpoint(fsys vfs.FS, path string, lines []string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", checkpointVersion, len(lines))
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return writeAtomic(fsys, path, b.Bytes())
}

func writeAtomic(fsys vfs.FS, path string, data []byte) error {
	tmp := path + ".tmp"
	if err := writeFileSync(fsys, tmp, data); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return syncDir(fsys, filepath.Dir(path))
}

// syncDir fsyncs a directory so renames and new files in it are durable.
func syncDir(fsys vfs.FS, dir string) error {
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return fmt.Errorf("log: fsync %s: %w", dir, err)
	}
	return nil
}

// partitionKey names a partition in data-dir checkpoints.
type partitionKey struct {
	topic     string
	partition int32
}

// readOffsetsCheckpoint reads "<topic> <partition> <offset>" entries.
func readOffsetsCheckpoint(fsys vfs.FS, path string) (map[partitionKey]int64, error) {
	entries, err := readCheckpoint(fsys, path, 3)
	if err != nil {
		return nil, err
	}
	out := make(map[partitionKey]int64, len(entries))
	for _, e := range entries {
		p, err1 := strconv.ParseInt(e[1], 10, 32)
		off, err2 := strconv.ParseInt(e[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 || off < 0 {
			return nil, fmt.Errorf("%w: checkpoint %s: malformed entry %q", ErrCorrupt, path, strings.Join(e, " "))
		}
		out[partitionKey{e[0], int32(p)}] = off
	}
	return out, nil
}

// writeOffsetsCheckpoint writes "<topic> <partition> <offset>" entries sorted
// by topic and partition.
func writeOffsetsCheckpoint(fsys vfs.FS, path string, offsets map[partitionKey]int64) error {
	keys := make([]partitionKey, 0, len(offsets))
	for k := range offsets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].partition < keys[j].partition
	})
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = fmt.Sprintf("%s %d %d", k.topic, k.partition, offsets[k])
	}
	return writeCheckpoint(fsys, path, lines)
}
