package log

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/record"
)

// fakeClock is an injected clock tests advance by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.UnixMilli(1_700_000_000_000)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// warnRecorder is a slog handler that keeps warning messages.
type warnRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnRecorder) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool { msg += " " + a.Key + "=" + a.Value.String(); return true })
	w.msgs = append(w.msgs, msg)
	return nil
}
func (w *warnRecorder) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnRecorder) WithGroup(string) slog.Handler      { return w }

func (w *warnRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.msgs
	w.msgs = nil
	return m
}

// env is a data dir under test with its clock and warnings.
type env struct {
	t     testing.TB
	path  string
	clock *fakeClock
	warns *warnRecorder
	cfg   Config
	dir   *Dir
	// fs, when set, is the file system the dir is opened on.
	fs vfs.FS
	// onOffline is passed as Options.OnOffline.
	onOffline func(dir string, err error)
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	e := &env{t: t, path: t.TempDir(), clock: newClock(), warns: &warnRecorder{}, cfg: cfg}
	e.open()
	t.Cleanup(func() {
		if e.dir != nil {
			e.dir.closeLogs()
		}
	})
	return e
}

func (e *env) opts() Options {
	return Options{Now: e.clock.Now, Logger: slog.New(e.warns), FS: e.fs, OnOffline: e.onOffline}
}

func (e *env) open() {
	e.t.Helper()
	d, err := OpenDir(e.path, e.opts(), func(string, int32) Config { return e.cfg })
	if err != nil {
		e.t.Fatalf("OpenDir: %v", err)
	}
	e.dir = d
}

// reopen closes cleanly and opens again.
func (e *env) reopen() {
	e.t.Helper()
	if err := e.dir.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	e.dir = nil
	e.open()
}

// crash drops the data dir without flushing, checkpointing or a marker, then
// opens it again.
func (e *env) crash() {
	e.t.Helper()
	e.dir.closeLogs()
	e.dir = nil
	e.open()
}

func (e *env) log(topic string, partition int32) *Log {
	e.t.Helper()
	l, err := e.dir.Create(topic, partition, e.cfg)
	if err != nil {
		e.t.Fatalf("Create: %v", err)
	}
	return l
}

// batchOpt adjusts a test batch.
type batchSpec struct {
	records int
	ts      int64 // first timestamp
	tsStep  int64 // per-record timestamp delta
	epoch   int32
	codec   record.Codec
	value   int // value size
}

func makeBatch(t testing.TB, b batchSpec) []byte {
	t.Helper()
	if b.records == 0 {
		b.records = 1
	}
	if b.value == 0 {
		b.value = 20
	}
	rs := make([]record.Record, b.records)
	for i := range rs {
		rs[i] = record.Record{TimestampDelta: int64(i) * b.tsStep, Key: []byte(fmt.Sprint("k", i)), Value: bytes.Repeat([]byte{'v'}, b.value)}
	}
	out, err := record.Encode(record.BatchSpec{
		PartitionLeaderEpoch: b.epoch, Codec: b.codec, FirstTimestamp: b.ts,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
	}, rs)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return out
}

func mustAppend(t testing.TB, l *Log, batch []byte) int64 {
	t.Helper()
	off, err := l.Append(batch)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return off
}

// readAll reads every batch from offset up to the log end and returns their
// headers, checking each batch's CRC.
func readAll(t testing.TB, l *Log, from int64) []record.Header {
	t.Helper()
	var hs []record.Header
	leo := l.LogEndOffset()
	for from < leo {
		b, err := l.Read(from, 1<<20, leo, true)
		if err != nil {
			t.Fatalf("Read(%d): %v", from, err)
		}
		if len(b) == 0 {
			t.Fatalf("Read(%d) returned nothing below the end %d", from, leo)
		}
		it := record.Batches(b)
		for it.Next() {
			if _, err := record.Validate(it.Batch(), 1<<20); err != nil {
				t.Fatalf("batch at %d: %v", it.Header().BaseOffset, err)
			}
			hs = append(hs, it.Header())
			from = it.Header().NextOffset()
		}
		if it.Err() != nil {
			t.Fatalf("Read(%d) returned a broken run: %v", from, it.Err())
		}
	}
	return hs
}

func segmentFiles(t testing.TB, dir, suffix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
