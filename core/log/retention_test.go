package log

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/record"
)

func segBases(l *Log) []int64 {
	var out []int64
	for _, s := range l.Segments() {
		out = append(out, s.BaseOffset)
	}
	return out
}

// timedLog builds a log whose segment i (of 5) holds 4 batches with
// timestamps around clock start + i hours, rolled by segment.ms.
func timedLog(t *testing.T) (*env, *Log) {
	cfg := DefaultConfig()
	cfg.SegmentMs = int64(time.Hour / time.Millisecond)
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	start := e.clock.Now().UnixMilli()
	for seg := 0; seg < 5; seg++ {
		for b := 0; b < 4; b++ {
			ts := start + int64(seg)*int64(time.Hour/time.Millisecond)*2 + int64(b)
			mustAppend(t, l, makeBatch(t, batchSpec{records: 2, ts: ts}))
		}
	}
	if got := fmt.Sprint(segBases(l)); got != "[0 8 16 24 32]" {
		t.Fatalf("fixture segments %s", got)
	}
	return e, l
}

func TestRetentionByTime(t *testing.T) {
	tests := []struct {
		name        string
		retention   time.Duration
		advance     time.Duration
		limit       int64
		wantDeleted int
		wantStart   int64
	}{
		{"nothing old enough", 24 * time.Hour, 0, -1, 0, 0},
		{"forever", -1, 1000 * time.Hour, -1, 0, 0},
		{"two segments", 5 * time.Hour, 8 * time.Hour, -1, 2, 16},
		{"never the active one", time.Hour, 100 * time.Hour, -1, 4, 32},
		{"bounded by the high watermark", time.Hour, 100 * time.Hour, 20, 2, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, l := timedLog(t)
			cfg := l.Config()
			cfg.RetentionMs = int64(tt.retention / time.Millisecond)
			if tt.retention < 0 {
				cfg.RetentionMs = -1
			}
			l.SetConfig(cfg)
			e.clock.Advance(tt.advance)
			var n int
			var err error
			if tt.limit >= 0 {
				n, err = l.ApplyRetentionBelow(tt.limit)
			} else {
				n, err = l.ApplyRetention()
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.wantDeleted || l.LogStartOffset() != tt.wantStart {
				t.Fatalf("deleted %d, start %d; want %d, %d", n, l.LogStartOffset(), tt.wantDeleted, tt.wantStart)
			}
			if got := segBases(l)[0]; got != tt.wantStart {
				t.Fatalf("first segment %d, want %d", got, tt.wantStart)
			}
			if n > 0 {
				if _, err := os.Stat(filepath.Join(l.Path(), segmentName(0, logSuffix))); !os.IsNotExist(err) {
					t.Fatalf("deleted segment file still there: %v", err)
				}
				if _, err := l.Read(tt.wantStart-1, 100, 40, true); !errors.Is(err, ErrOffsetOutOfRange) {
					t.Fatalf("read below the start: %v", err)
				}
			}
			if len(readAll(t, l, l.LogStartOffset())) != int(40-tt.wantStart)/2 {
				t.Fatal("remaining batches do not read back")
			}
		})
	}
}

func TestRetentionBySize(t *testing.T) {
	_, l := timedLog(t)
	segs := l.Segments()
	total := l.Size()
	tests := []struct {
		limit       int64
		wantDeleted int
	}{
		// Kafka deletes a segment only while what remains is still at
		// least retention.bytes.
		{-1, 0},
		{total, 0},
		{total - 1, 0},
		{total - segs[0].Size, 1},
		{total - segs[0].Size - 1, 1},
		{total - segs[0].Size - segs[1].Size, 2},
		{0, 4},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			_, l := timedLog(t)
			cfg := l.Config()
			cfg.RetentionMs, cfg.RetentionBytes = -1, tt.limit
			l.SetConfig(cfg)
			n, err := l.ApplyRetention()
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.wantDeleted || l.LogStartOffset() != int64(8*n) {
				t.Fatalf("deleted %d (start %d), want %d", n, l.LogStartOffset(), tt.wantDeleted)
			}
		})
	}
}

func TestDeleteRecordsBefore(t *testing.T) {
	tests := []struct {
		name      string
		offset    int64
		wantErr   error
		wantStart int64
		wantFirst int64 // first remaining segment
	}{
		{"below start", 0, nil, 0, 0},
		{"mid first segment", 5, nil, 5, 0},
		{"segment boundary", 16, nil, 16, 16},
		{"mid later segment", 27, nil, 27, 24},
		{"log end", 40, nil, 40, 32},
		{"past log end", 41, ErrOffsetOutOfRange, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, l := timedLog(t)
			err := l.DeleteRecordsBefore(tt.offset)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if l.LogStartOffset() != tt.wantStart || segBases(l)[0] != tt.wantFirst {
				t.Fatalf("start %d, segments %v; want start %d, first %d", l.LogStartOffset(), segBases(l), tt.wantStart, tt.wantFirst)
			}
			if tt.wantStart > 0 && tt.wantStart < 40 {
				b, err := l.Read(tt.wantStart, 1, 40, true)
				if err != nil {
					t.Fatal(err)
				}
				if h, _ := record.ParseHeader(b); h.BaseOffset > tt.wantStart || h.LastOffset() < tt.wantStart {
					t.Fatalf("read at the start returned batch %d-%d", h.BaseOffset, h.LastOffset())
				}
				if _, err := l.Read(tt.wantStart-1, 1, 40, true); !errors.Is(err, ErrOffsetOutOfRange) {
					t.Fatalf("read below the start: %v", err)
				}
			}
			// The start offset survives a restart through the checkpoint.
			e.reopen()
			l, _ = e.dir.Log("t", 0)
			if l.LogStartOffset() != tt.wantStart {
				t.Fatalf("start %d after reopen, want %d", l.LogStartOffset(), tt.wantStart)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name      string
		to        int64
		wantLEO   int64
		wantSegs  string
		wantStart int64
	}{
		{"past the end", 50, 40, "[0 8 16 24 32]", 0},
		{"at the end", 40, 40, "[0 8 16 24 32]", 0},
		{"batch boundary in the active segment", 36, 36, "[0 8 16 24 32]", 0},
		{"inside a batch", 37, 36, "[0 8 16 24 32]", 0},
		{"segment base", 16, 16, "[0 8 16]", 0},
		{"inside an older segment", 11, 10, "[0 8]", 0},
		{"to zero", 0, 0, "[0]", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, l := timedLog(t)
			if err := l.Truncate(tt.to); err != nil {
				t.Fatal(err)
			}
			if l.LogEndOffset() != tt.wantLEO || fmt.Sprint(segBases(l)) != tt.wantSegs {
				t.Fatalf("end %d, segments %v; want %d, %s", l.LogEndOffset(), segBases(l), tt.wantLEO, tt.wantSegs)
			}
			hs := readAll(t, l, 0)
			if len(hs) > 0 && hs[len(hs)-1].NextOffset() != tt.wantLEO {
				t.Fatalf("last batch ends at %d", hs[len(hs)-1].NextOffset())
			}
			// Appends continue at the new end; indexes stay consistent.
			if off := mustAppend(t, l, makeBatch(t, batchSpec{records: 2, ts: e.clock.Now().UnixMilli()})); off != tt.wantLEO {
				t.Fatalf("append at %d, want %d", off, tt.wantLEO)
			}
			e.reopen()
			if w := e.warns.take(); len(w) != 0 {
				t.Fatalf("reopen after truncation repaired: %v", w)
			}
			l, _ = e.dir.Log("t", 0)
			if n := len(readAll(t, l, 0)); n != len(hs)+1 {
				t.Fatalf("%d batches after reopen, want %d", n, len(hs)+1)
			}
		})
	}
	t.Run("below the first segment", func(t *testing.T) {
		e, l := timedLog(t)
		if err := l.DeleteRecordsBefore(20); err != nil {
			t.Fatal(err)
		}
		if err := l.Truncate(5); err != nil {
			t.Fatal(err)
		}
		if l.LogEndOffset() != 5 || l.LogStartOffset() != 5 || fmt.Sprint(segBases(l)) != "[5]" {
			t.Fatalf("end %d start %d segments %v", l.LogEndOffset(), l.LogStartOffset(), segBases(l))
		}
		if off := mustAppend(t, l, makeBatch(t, batchSpec{})); off != 5 {
			t.Fatalf("append at %d", off)
		}
		e.reopen()
		l, _ = e.dir.Log("t", 0)
		if l.LogEndOffset() != 6 || l.LogStartOffset() != 5 {
			t.Fatalf("after reopen: end %d start %d", l.LogEndOffset(), l.LogStartOffset())
		}
	})
}
