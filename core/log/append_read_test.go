package log

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/record"
)

func tinyConfig() Config {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 600
	cfg.IndexIntervalBytes = 150
	return cfg
}

// fill appends n batches of records each, timestamps rising by 10 per batch.
func fill(t testing.TB, l *Log, n, records int) (sizes []int) {
	t.Helper()
	for i := 0; i < n; i++ {
		b := makeBatch(t, batchSpec{records: records, ts: 1000 + int64(i)*10, tsStep: 1})
		sizes = append(sizes, len(b))
		mustAppend(t, l, b)
	}
	return sizes
}

func TestAppendAssignsOffsets(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	want := int64(0)
	for i, n := range []int{1, 3, 7, 2, 1, 5} {
		b := makeBatch(t, batchSpec{records: n, ts: 1})
		record.SetBaseOffset(b, 999) // the log overwrites whatever the client sent
		off := mustAppend(t, l, b)
		if off != want {
			t.Fatalf("append %d: offset %d, want %d", i, off, want)
		}
		if h, _ := record.ParseHeader(b); h.BaseOffset != want {
			t.Fatalf("append %d: batch base offset %d not patched in place", i, h.BaseOffset)
		}
		if _, err := record.Validate(b, 1<<20); err != nil {
			t.Fatalf("append %d: batch no longer valid: %v", i, err)
		}
		want += int64(n)
		if l.LogEndOffset() != want {
			t.Fatalf("LogEndOffset %d, want %d", l.LogEndOffset(), want)
		}
	}
}

func TestAppendRejects(t *testing.T) {
	cfg := tinyConfig()
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	good := makeBatch(t, batchSpec{})
	tests := []struct {
		name  string
		batch []byte
		want  error
	}{
		{"too short", good[:20], record.ErrTruncated},
		{"length mismatch", append(append([]byte(nil), good...), 0), ErrCorrupt},
		{"larger than a segment", makeBatch(t, batchSpec{value: int(cfg.SegmentBytes)}), ErrBatchTooLarge},
		{"bad magic", func() []byte { b := append([]byte(nil), good...); b[16] = 1; return b }(), record.ErrUnsupportedMagic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := l.Append(tt.batch); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if l.LogEndOffset() != 0 {
				t.Fatalf("a rejected batch moved the log end offset to %d", l.LogEndOffset())
			}
		})
	}
}

func TestReadAcrossSegments(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	sizes := fill(t, l, 60, 3) // offsets 0..179, many segments
	if n := len(l.Segments()); n < 10 {
		t.Fatalf("only %d segments; the test wants many", n)
	}
	leo := l.LogEndOffset()
	one := sizes[0]
	tests := []struct {
		name      string
		offset    int64
		maxBytes  int
		maxOffset int64
		minOne    bool
		wantFirst int64 // base offset of the first batch; -1 for an empty result
		wantCount int   // batches returned; 0 means "at least one, up to the segment end"
		wantErr   error
	}{
		{"start", 0, one, leo, false, 0, 1, nil},
		{"middle of a batch", 4, one, leo, false, 3, 1, nil},
		{"last offset of a batch", 5, 2 * one, leo, false, 3, 2, nil},
		{"segment boundary", 90, 1 << 20, leo, false, 90, 0, nil},
		{"max bytes below one batch", 0, one - 1, leo, false, -1, 0, nil},
		{"max bytes below one batch, min one", 0, one - 1, leo, true, 0, 1, nil},
		{"zero max bytes, min one", 7, 0, leo, true, 6, 1, nil},
		{"bounded by max offset", 0, 1 << 20, 6, false, 0, 2, nil},
		{"max offset inside a batch", 0, 1 << 20, 7, false, 0, 2, nil},
		{"max offset at offset", 30, 1 << 20, 30, true, -1, 0, nil},
		{"batch straddles max offset", 31, 1 << 20, 32, true, -1, 0, nil},
		{"at log end", leo, 1 << 20, leo, true, -1, 0, nil},
		{"past log end", leo + 1, 1 << 20, leo + 1, true, -1, 0, ErrOffsetOutOfRange},
		{"negative", -1, 1 << 20, leo, true, -1, 0, ErrOffsetOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := l.Read(tt.offset, tt.maxBytes, tt.maxOffset, tt.minOne)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantFirst < 0 {
				if len(b) != 0 {
					t.Fatalf("got %d bytes, want none", len(b))
				}
				return
			}
			it := record.Batches(b)
			n := 0
			for it.Next() {
				h := it.Header()
				if n == 0 && h.BaseOffset != tt.wantFirst {
					t.Fatalf("first batch at %d, want %d", h.BaseOffset, tt.wantFirst)
				}
				if h.LastOffset() >= tt.maxOffset {
					t.Fatalf("batch %d-%d reaches max offset %d", h.BaseOffset, h.LastOffset(), tt.maxOffset)
				}
				if _, err := record.Validate(it.Batch(), 1<<20); err != nil {
					t.Fatalf("batch %d: %v", h.BaseOffset, err)
				}
				n++
			}
			if it.Err() != nil {
				t.Fatalf("result is not whole batches: %v", it.Err())
			}
			if tt.wantCount > 0 && n != tt.wantCount {
				t.Fatalf("%d batches, want %d", n, tt.wantCount)
			}
			if n == 0 || (!tt.minOne && len(b) > tt.maxBytes) {
				t.Fatalf("%d batches in %d bytes with max %d", n, len(b), tt.maxBytes)
			}
		})
	}
	// Every offset reads back the batch that holds it.
	for off := int64(0); off < leo; off++ {
		b, err := l.Read(off, 1, leo, true)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		h, err := record.ParseHeader(b)
		if err != nil || h.BaseOffset > off || h.LastOffset() < off || h.Size() != len(b) {
			t.Fatalf("Read(%d) = batch %+v, %v", off, h, err)
		}
	}
	if hs := readAll(t, l, 0); len(hs) != 60 {
		t.Fatalf("read back %d batches, want 60", len(hs))
	}
}

func TestRollRules(t *testing.T) {
	t.Run("size", func(t *testing.T) {
		cfg := tinyConfig()
		e := newEnv(t, cfg)
		l := e.log("t", 0)
		sizes := fill(t, l, 20, 3)
		for i, s := range l.Segments() {
			if s.Size > cfg.SegmentBytes {
				t.Fatalf("segment %d holds %d bytes, over %d", i, s.Size, cfg.SegmentBytes)
			}
			if i < len(l.Segments())-1 && s.Size+int64(sizes[0]) <= cfg.SegmentBytes {
				t.Fatalf("segment %d rolled at %d bytes with room for another batch", i, s.Size)
			}
		}
	})
	t.Run("time by batch timestamps", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.SegmentMs = 100
		e := newEnv(t, cfg)
		l := e.log("t", 0)
		for _, ts := range []int64{1000, 1050, 1100, 1101, 1150, 1202} {
			mustAppend(t, l, makeBatch(t, batchSpec{ts: ts}))
		}
		// 1101-1000 > 100 rolls before 1101; 1202-1101 > 100 rolls before 1202.
		got := []int64{}
		for _, s := range l.Segments() {
			got = append(got, s.BaseOffset)
		}
		if fmt.Sprint(got) != "[0 3 5]" {
			t.Fatalf("segments at %v, want [0 3 5]", got)
		}
	})
	t.Run("time by clock without timestamps", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.SegmentMs = 1000
		e := newEnv(t, cfg)
		l := e.log("t", 0)
		mustAppend(t, l, makeBatch(t, batchSpec{ts: -1}))
		e.clock.Advance(999 * time.Millisecond)
		mustAppend(t, l, makeBatch(t, batchSpec{ts: -1}))
		e.clock.Advance(2 * time.Millisecond)
		mustAppend(t, l, makeBatch(t, batchSpec{ts: -1}))
		if n := len(l.Segments()); n != 2 {
			t.Fatalf("%d segments, want 2", n)
		}
	})
	t.Run("index full", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.IndexIntervalBytes = 0
		cfg.MaxIndexBytes = 3 * timeEntrySize // 4 offset entries, 3 time entries
		e := newEnv(t, cfg)
		l := e.log("t", 0)
		for i := 0; i < 10; i++ {
			mustAppend(t, l, makeBatch(t, batchSpec{ts: int64(100 + i)}))
		}
		// Entries start with the second batch; the time index fills after
		// the fourth batch of each segment.
		got := []int64{}
		for _, s := range l.Segments() {
			got = append(got, s.BaseOffset)
		}
		if fmt.Sprint(got) != "[0 4 8]" {
			t.Fatalf("segments at %v, want [0 4 8]", got)
		}
	})
	t.Run("relative offset overflow", func(t *testing.T) {
		e := newEnv(t, DefaultConfig())
		l := e.log("t", 0)
		mustAppend(t, l, makeBatch(t, batchSpec{}))
		b := makeBatch(t, batchSpec{})
		// A batch claiming a huge offset span cannot share the segment.
		l.mu.Lock()
		l.active().next = math.MaxInt32 - 1
		l.mu.Unlock()
		raw := append([]byte(nil), b...)
		setLastOffsetDelta(raw, 5)
		if _, err := l.Append(raw); err != nil {
			t.Fatal(err)
		}
		if segs := l.Segments(); len(segs) != 2 || segs[1].BaseOffset != math.MaxInt32-1 {
			t.Fatalf("segments %+v", segs)
		}
	})
}

// setLastOffsetDelta edits a batch header for tests of offset arithmetic.
func setLastOffsetDelta(b []byte, d int32) {
	b[23], b[24], b[25], b[26] = byte(d>>24), byte(d>>16), byte(d>>8), byte(d)
	crc := record.Checksum(b)
	b[17], b[18], b[19], b[20] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
}

func TestSyncAdvancesRecoveryPoint(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	fill(t, l, 10, 2)
	if rp := l.RecoveryPoint(); rp != 0 {
		t.Fatalf("recovery point %d before any Sync", rp)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if rp := l.RecoveryPoint(); rp != l.LogEndOffset() {
		t.Fatalf("recovery point %d after Sync, want %d", rp, l.LogEndOffset())
	}
	l.mu.RLock()
	pending := len(l.unflushed)
	l.mu.RUnlock()
	if pending != 0 {
		t.Fatalf("%d rolled segments still unflushed after Sync", pending)
	}
	// Concurrent appends and syncs: every Sync returns with its appends durable.
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				off, err := l.Append(makeBatch(t, batchSpec{ts: 5}))
				if err != nil {
					t.Error(err)
					return
				}
				if err := l.Sync(); err != nil {
					t.Error(err)
					return
				}
				if rp := l.RecoveryPoint(); rp <= off {
					t.Errorf("recovery point %d after syncing offset %d", rp, off)
				}
			}
		}()
	}
	wg.Wait()
}

func TestConcurrentReadersAndWriter(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				leo := l.LogEndOffset()
				from := l.LogStartOffset()
				for from < leo {
					b, err := l.Read(from, 400, leo, true)
					if err != nil {
						if errors.Is(err, ErrOffsetOutOfRange) {
							break // retention moved the start
						}
						t.Error(err)
						return
					}
					it := record.Batches(b)
					for it.Next() {
						from = it.Header().NextOffset()
					}
					if it.Err() != nil || len(b) == 0 {
						t.Errorf("read at %d: %d bytes, %v", from, len(b), it.Err())
						return
					}
				}
			}
		}()
	}
	cfg := tinyConfig()
	cfg.RetentionBytes = 3000
	for i := 0; i < 300; i++ {
		mustAppend(t, l, makeBatch(t, batchSpec{records: 2, ts: int64(i)}))
		if i%50 == 0 {
			l.SetConfig(cfg)
			if _, err := l.ApplyRetention(); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(done)
	wg.Wait()
}

func TestScan(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	fill(t, l, 30, 2)
	tests := []struct {
		from      int64
		wantFirst int64
		wantN     int
	}{{0, 0, 30}, {3, 2, 29}, {58, 58, 1}, {60, 0, 0}, {-5, 0, 30}}
	for _, tt := range tests {
		var got []int64
		err := l.Scan(tt.from, func(h record.Header, b []byte) error {
			if _, err := record.Validate(b, 1<<20); err != nil {
				return err
			}
			got = append(got, h.BaseOffset)
			return nil
		})
		if err != nil {
			t.Fatalf("Scan(%d): %v", tt.from, err)
		}
		if len(got) != tt.wantN || (tt.wantN > 0 && got[0] != tt.wantFirst) {
			t.Fatalf("Scan(%d) visited %v", tt.from, got)
		}
	}
	stop := errors.New("stop")
	if err := l.Scan(0, func(record.Header, []byte) error { return stop }); err != stop {
		t.Fatalf("Scan did not return fn's error: %v", err)
	}
}

func TestClosedLog(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	fill(t, l, 3, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(makeBatch(t, batchSpec{})); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if _, err := l.Read(0, 100, 3, true); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	if err := l.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close: %v", err)
	}
}

func TestManyRollsWithoutSync(t *testing.T) {
	cfg := tinyConfig()
	cfg.SegmentBytes = 200 // a segment per batch
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	fill(t, l, 40, 1)
	l.mu.RLock()
	pending := len(l.unflushed)
	l.mu.RUnlock()
	if pending < 15 {
		t.Fatalf("%d unflushed segments", pending)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if l.RecoveryPoint() != l.LogEndOffset() {
		t.Fatalf("recovery point %d, end %d", l.RecoveryPoint(), l.LogEndOffset())
	}
}
