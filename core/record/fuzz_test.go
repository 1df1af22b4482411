package record

import (
	"errors"
	"testing"
)

func FuzzValidate(f *testing.F) {
	for _, c := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		b, err := Encode(BatchSpec{Codec: c, FirstTimestamp: 1}, testRecords(5))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkValidate(t, b)
		if len(b) >= HeaderSize {
			// Reseal a copy so mutations reach the record decoder instead of
			// stopping at the CRC.
			checkValidate(t, reseal(append([]byte(nil), b...)))
		}
	})
}

func checkValidate(t *testing.T, b []byte) {
	const limit = 1 << 16
	{
		h, err := Validate(b, limit)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) &&
				!errors.Is(err, ErrUnsupportedMagic) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		n := 0
		if err := Records(b, limit, func(Record) error { n++; return nil }); err != nil {
			t.Fatalf("Validate accepted a batch Records rejects: %v", err)
		}
		if n != int(h.NumRecords) {
			t.Fatalf("Records saw %d records, header says %d", n, h.NumRecords)
		}
		it := Batches(b)
		if !it.Next() || it.Next() || it.Err() != nil {
			t.Fatalf("Batches disagrees with Validate: %v", it.Err())
		}
	}
}
