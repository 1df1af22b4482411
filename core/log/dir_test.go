package log

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

func TestCheckpointFiles(t *testing.T) {
	e := newEnv(t, tinyConfig())
	a := e.log("orders", 1)
	b := e.log("orders", 0)
	c := e.log("my.topic-x", 12)
	fill(t, a, 10, 2)
	fill(t, b, 3, 1)
	fill(t, c, 30, 1)
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteRecordsBefore(25); err != nil {
		t.Fatal(err)
	}
	if err := e.dir.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(e.path, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Sorted by topic then partition, Kafka's text format. The recovery point
	// of c was raised to its new start offset.
	if got, want := read(recoveryPointFile), "0\n3\nmy.topic-x 12 25\norders 0 0\norders 1 20\n"; got != want {
		t.Fatalf("recovery points = %q, want %q", got, want)
	}
	if got, want := read(logStartOffsetFile), "0\n3\nmy.topic-x 12 25\norders 0 0\norders 1 0\n"; got != want {
		t.Fatalf("log start offsets = %q, want %q", got, want)
	}
	if err := e.dir.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := read(recoveryPointFile), "0\n3\nmy.topic-x 12 30\norders 0 3\norders 1 20\n"; got != want {
		t.Fatalf("recovery points after Close = %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(e.path, cleanShutdownFile)); err != nil {
		t.Fatalf("no clean shutdown marker after Close: %v", err)
	}
	e.dir = nil
	e.open()
	if _, err := os.Stat(filepath.Join(e.path, cleanShutdownFile)); !os.IsNotExist(err) {
		t.Fatalf("clean shutdown marker left after open: %v", err)
	}
	c, _ = e.dir.Log("my.topic-x", 12)
	if c.LogStartOffset() != 25 || c.LogEndOffset() != 30 {
		t.Fatalf("reopened log start %d end %d", c.LogStartOffset(), c.LogEndOffset())
	}
}

func TestReadCheckpointErrors(t *testing.T) {
	tests := []struct {
		name, body string
	}{
		{"empty", ""},
		{"bad version", "1\n0\n"},
		{"bad count", "0\nx\n"},
		{"too few", "0\n2\na 0 1\n"},
		{"too many", "0\n1\na 0 1\nb 0 2\n"},
		{"bad fields", "0\n1\na 0\n"},
		{"bad offset", "0\n1\na 0 x\n"},
		{"negative partition", "0\n1\na -1 5\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cp")
			os.WriteFile(p, []byte(tt.body), 0o644)
			if _, err := readOffsetsCheckpoint(vfs.Default, p); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
	m, err := readOffsetsCheckpoint(vfs.Default, filepath.Join(t.TempDir(), "missing"))
	if err != nil || len(m) != 0 {
		t.Fatalf("missing file: %v, %v", m, err)
	}
}

func TestDirCreateDelete(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 3)
	if again := e.log("t", 3); again != l {
		t.Fatal("Create is not idempotent")
	}
	fill(t, l, 5, 1)
	for _, bad := range []struct {
		topic string
		part  int32
	}{{"", 0}, {"..", 0}, {"a/b", 0}, {strings.Repeat("x", 250), 0}, {"ok", -1}} {
		if _, err := e.dir.Create(bad.topic, bad.part, e.cfg); err == nil {
			t.Errorf("Create(%q, %d) succeeded", bad.topic, bad.part)
		}
	}
	if got := len(e.dir.Logs()); got != 1 {
		t.Fatalf("%d logs", got)
	}
	if err := e.dir.Delete("t", 3); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.dir.Log("t", 3); ok {
		t.Fatal("deleted log still listed")
	}
	entries, _ := os.ReadDir(e.path)
	for _, en := range entries {
		if en.IsDir() {
			t.Fatalf("directory %s left behind", en.Name())
		}
	}
	if _, err := l.Append(makeBatch(t, batchSpec{})); !errors.Is(err, ErrClosed) {
		t.Fatalf("append to a deleted log: %v", err)
	}
	if err := e.dir.Delete("t", 3); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
}

func TestOpenDirLayout(t *testing.T) {
	e := newEnv(t, tinyConfig())
	fill(t, e.log("keep", 0), 3, 1)
	if err := e.dir.Close(); err != nil {
		t.Fatal(err)
	}
	e.dir = nil
	// A deletion interrupted by a crash, partitions in transition, stray
	// files and directories that are not partitions.
	for _, d := range []string{"old-0.0123abcd-delete", "move-1.abcd-future", "raft", "no-number-x", "bad topic-0", "__cluster_metadata-0"} {
		os.MkdirAll(filepath.Join(e.path, d), 0o755)
	}
	os.WriteFile(filepath.Join(e.path, "old-0.0123abcd-delete", "00000000000000000000.log"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(e.path, "meta.properties"), []byte("version=1\n"), 0o644)
	os.WriteFile(filepath.Join(e.path, recoveryPointFile), []byte("garbage"), 0o644)
	e.open()
	if _, err := os.Stat(filepath.Join(e.path, "old-0.0123abcd-delete")); !os.IsNotExist(err) {
		t.Fatalf("-delete directory not removed: %v", err)
	}
	logs := e.dir.Logs()
	if len(logs) != 1 || logs[0].Topic() != "keep" {
		t.Fatalf("logs %v", logs)
	}
	if n := len(readAll(t, logs[0], 0)); n != 3 {
		t.Fatalf("read %d batches", n)
	}

	// A data dir path that is a file is a clear error.
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := OpenDir(f, Options{}, nil); err == nil {
		t.Fatal("OpenDir on a file succeeded")
	}
}

func TestParsePartitionDir(t *testing.T) {
	tests := []struct {
		name      string
		topic     string
		partition int32
		ok        bool
	}{
		{"orders-0", "orders", 0, true},
		{"my-topic-12", "my-topic", 12, true},
		{"a.b_c-7", "a.b_c", 7, true},
		{"orders", "", 0, false},
		{"-1", "", 0, false},
		{"orders-", "", 0, false},
		{"orders-01", "", 0, false},
		{"orders--1", "orders-", 1, true},
		{"bad topic-1", "", 0, false},
	}
	for _, tt := range tests {
		topic, p, err := parsePartitionDir(tt.name)
		if (err == nil) != tt.ok || (tt.ok && (topic != tt.topic || p != tt.partition)) {
			t.Errorf("parsePartitionDir(%q) = %q, %d, %v", tt.name, topic, p, err)
		}
	}
}
