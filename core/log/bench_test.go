package log

import (
	"testing"
)

func BenchmarkAppend(b *testing.B) {
	e := newEnv(b, DefaultConfig())
	l := e.log("bench", 0)
	batch := makeBatch(b, batchSpec{records: 10, ts: 1, value: 100})
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 4 << 20
	e := newEnv(b, cfg)
	l := e.log("bench", 0)
	batch := makeBatch(b, batchSpec{records: 10, ts: 1, value: 100})
	for i := 0; i < 20000; i++ {
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	leo := l.LogEndOffset()
	b.ReportAllocs()
	b.SetBytes(64 << 10)
	off := int64(0)
	for b.Loop() {
		out, err := l.Read(off, 64<<10, leo, true)
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
		off = (off + 7919) % leo
	}
}
