package record

import (
	"fmt"
	"testing"
)

func BenchmarkValidate(b *testing.B) {
	for _, c := range []Codec{CodecNone, CodecLZ4, CodecZstd} {
		batch, err := Encode(BatchSpec{Codec: c, FirstTimestamp: 1}, testRecords(100))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(c), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(batch)))
			for b.Loop() {
				if _, err := Validate(batch, 1<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
