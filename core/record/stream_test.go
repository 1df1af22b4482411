package record

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// A compressed batch that expands to 96 MiB (zeros compress well) is
// validated with a bounded buffer: before streaming, Validate decompressed
// it whole into a buffer of the expanded size. Each codec is checked, with
// records small enough to check in place and one too large for the buffer.
func TestValidateStreamsWithBoundedMemory(t *testing.T) {
	const expanded = 96 << 20
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		for _, recSize := range []int{8 << 10, 4 << 20} {
			t.Run(fmt.Sprintf("%s/%dKiB", c, recSize>>10), func(t *testing.T) {
				value := make([]byte, recSize)
				recs := make([]Record, expanded/recSize)
				for i := range recs {
					recs[i] = Record{OffsetDelta: int32(i), Key: []byte("k"), Value: value}
				}
				batch, err := Encode(BatchSpec{Codec: c, FirstTimestamp: 1}, recs)
				if err != nil {
					t.Fatal(err)
				}
				recs = nil
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				h, err := ValidateKeyed(batch, 1<<30)
				runtime.ReadMemStats(&after)
				if err != nil {
					t.Fatal(err)
				}
				if int(h.NumRecords) != expanded/recSize {
					t.Fatalf("%d records", h.NumRecords)
				}
				alloc := after.TotalAlloc - before.TotalAlloc
				t.Logf("%s batch of %d bytes expanding to %d MiB: validation allocated %d KiB", c, len(batch), expanded>>20, alloc>>10)
				// Snappy decodes one block at a time (xerial chunks of 32
				// KiB); a zstd decoder holds the frame's window (8 MiB
				// from this encoder, at most maxZstdWindow from any).
				bound := uint64(2 << 20)
				if c == CodecZstd {
					bound += 8 << 20
				}
				if alloc > bound {
					t.Fatalf("validation allocated %d KiB, bound %d KiB", alloc>>10, bound>>10)
				}
				// The decompressed bound still holds, without a buffer of that size.
				if _, err := Validate(batch, expanded-1); !errors.Is(err, ErrTooLarge) {
					t.Fatalf("with a bound below the expanded size: %v, want ErrTooLarge", err)
				}
			})
		}
	}
}

// A record missing its key fails ValidateKeyed, compressed or not.
func TestValidateKeyedNullKey(t *testing.T) {
	for _, c := range []Codec{CodecNone, CodecLZ4} {
		recs := testRecords(3)
		recs[1].Key = nil
		batch, err := Encode(BatchSpec{Codec: c}, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ValidateKeyed(batch, 1<<20); !errors.Is(err, ErrNullKey) {
			t.Fatalf("%s: %v, want ErrNullKey", c, err)
		}
		if _, err := Validate(batch, 1<<20); err != nil {
			t.Fatalf("%s: Validate: %v", c, err)
		}
	}
}
