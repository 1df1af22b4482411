package log

import "testing"

func TestSmoke(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1000
	cfg.IndexIntervalBytes = 100
	e := newEnv(t, cfg)
	l := e.log("orders", 0)
	for i := 0; i < 50; i++ {
		if off := mustAppend(t, l, makeBatch(t, batchSpec{records: 2, ts: int64(1000 + i)})); off != int64(2*i) {
			t.Fatalf("offset %d", off)
		}
	}
	if hs := readAll(t, l, 0); len(hs) != 50 {
		t.Fatalf("%d batches", len(hs))
	}
	e.reopen()
	l, _ = e.dir.Log("orders", 0)
	if hs := readAll(t, l, 0); len(hs) != 50 {
		t.Fatalf("%d batches", len(hs))
	}
	t.Log(e.warns.take(), len(l.Segments()))
	e.crash()
	l, _ = e.dir.Log("orders", 0)
	if hs := readAll(t, l, 0); len(hs) != 50 {
		t.Fatalf("%d batches", len(hs))
	}
	t.Log(e.warns.take())
}
