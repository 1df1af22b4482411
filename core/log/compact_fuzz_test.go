package log

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gregorbroker/gregor/core/record"
)

// FuzzCompactBatch feeds arbitrary bytes to the cleaner's batch filter as if
// read from a segment. It must never panic; whatever it writes must be whole
// v2 batches that keep the original offsets and only records that were
// there.
func FuzzCompactBatch(f *testing.F) {
	for _, c := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		f.Add(keyedBatch(f, keyedSpec{codec: c, ts: 5, pid: 4}, k("a", "1"), tomb("b"), k("a", "2"), kv{value: []byte("v")}), int64(10))
	}
	f.Fuzz(func(t *testing.T, b []byte, now int64) {
		h, err := record.ParseHeader(b)
		if err != nil || h.Size() != len(b) || h.LastOffsetDelta < 0 {
			return
		}
		orig := map[int64]string{}
		keys := map[string]int64{}
		err = record.Records(b, 1<<20, func(r record.Record) error {
			off := h.BaseOffset + int64(r.OffsetDelta)
			orig[off] = fmt.Sprintf("%q=%q", r.Key, r.Value)
			if r.Key != nil && len(r.Key)%2 == 0 {
				keys[string(r.Key)] = off // keep the latest of even-length keys
			}
			return nil
		})
		fl := &filter{keys: keys, producers: map[int64]int64{h.ProducerID: h.LastOffset()}, txns: newTxnTracker(nil), now: now, retention: 100, horizon: -1}
		out, _, ferr := fl.filterBatch(nil, h, b, &CleanResult{})
		if err != nil {
			if ferr == nil && !h.IsControl() && !h.IsTransactional() {
				t.Fatalf("filter accepted a batch the decoder rejects: %v", err)
			}
			return
		}
		if ferr != nil || len(out) == 0 {
			return
		}
		oh, err := record.ParseHeader(out)
		if err != nil || oh.Size() != len(out) {
			t.Fatalf("output is not one batch: %v", err)
		}
		if oh.BaseOffset != h.BaseOffset || oh.LastOffsetDelta != h.LastOffsetDelta || oh.ProducerID != h.ProducerID || oh.BaseSequence != h.BaseSequence {
			t.Fatalf("header changed: %v -> %v", h, oh)
		}
		err = record.Records(out, 1<<20, func(r record.Record) error {
			off := oh.BaseOffset + int64(r.OffsetDelta)
			if s, ok := orig[off]; !ok || s != fmt.Sprintf("%q=%q", r.Key, r.Value) {
				return fmt.Errorf("record at %d was not in the input", off)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("output: %v", err)
		}
	})
}

// TestCleanConcurrentWithAppendsAndRetention runs cleanings while another
// goroutine appends and applies retention; run it with -race.
func TestCleanConcurrentWithAppendsAndRetention(t *testing.T) {
	cfg := compactConfig()
	cfg.Delete = true
	cfg.RetentionBytes = 6000
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			if _, err := l.Append(keyedBatch(t, keyedSpec{ts: e.clock.Now().UnixMilli()}, k(fmt.Sprint("k", i%17), fmt.Sprint(i)))); err != nil {
				t.Error(err)
				return
			}
			if i%20 == 0 {
				if _, err := l.ApplyRetention(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for i := 0; i < 30; i++ {
		if _, err := l.Clean(CleanOptions{Limit: l.LogEndOffset(), Force: true}); err != nil && !errors.Is(err, ErrCleanAborted) {
			t.Fatal(err)
		}
	}
	wg.Wait()
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), Force: true})
	rs, _ := allRecords(t, l)
	seen := map[string]bool{}
	active := l.Segments()[len(l.Segments())-1].BaseOffset
	for _, r := range rs {
		if r.offset < active && seen[r.key] {
			t.Fatalf("key %s appears twice below the active segment", r.key)
		}
		seen[r.key] = r.offset < active
	}
}
