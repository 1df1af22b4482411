package partition

import (
	"testing"
)

// BenchmarkAppend measures the produce path below the wire: validation
// (CRC, record walk), producer state and the log append of a 100-record batch.
func BenchmarkAppend(b *testing.B) {
	t := &testing.T{}
	p, d := openPartition(t, b.TempDir(), testConfig())
	defer d.Close()
	cfg := testConfig()
	cfg.Log.SegmentBytes = 1 << 30
	p.SetConfig(cfg)
	src := batch(t, 100)
	buf := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(buf, src)
		if _, err := p.Append(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead measures the fetch path below the wire: locating an offset
// and reading up to 1 MiB of whole batches.
func BenchmarkRead(b *testing.B) {
	t := &testing.T{}
	p, d := openPartition(t, b.TempDir(), testConfig())
	defer d.Close()
	cfg := testConfig()
	cfg.Log.SegmentBytes = 1 << 30
	p.SetConfig(cfg)
	src := batch(t, 100)
	for i := 0; i < 2000; i++ {
		buf := append([]byte(nil), src...)
		if _, err := p.Append(buf); err != nil {
			b.Fatal(err)
		}
	}
	leo := p.Offsets().LogEndOffset
	b.ReportAllocs()
	b.ResetTimer()
	var n int64
	for i := 0; i < b.N; i++ {
		res, err := p.Read(int64(i*997)%leo, 1<<20, true)
		if err != nil {
			b.Fatal(err)
		}
		n += int64(len(res.Records))
	}
	b.SetBytes(n / int64(b.N))
}
