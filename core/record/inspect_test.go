package record

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzInspect checks that Inspect's two ways through a batch agree: streamed
// (no Record callback) and decoded whole for a callback, with and without
// the key requirement. Both accept or both reject (a batch near the
// decompression bound may be too large for one and not the other; a batch
// both keyless and corrupt may be rejected for either), every
// error is classified, the callback sees every record once, and the facts
// are the batch's header.
func FuzzInspect(f *testing.F) {
	for _, c := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		recs := testRecords(5)
		b, err := Encode(BatchSpec{Codec: c, FirstTimestamp: 1}, recs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b, true)
		recs[2].Key = nil
		if b, err = Encode(BatchSpec{Codec: c, FirstTimestamp: 1}, recs); err != nil {
			f.Fatal(err)
		}
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, keys bool) {
		checkInspect(t, b, keys)
		if len(b) >= HeaderSize {
			checkInspect(t, reseal(append([]byte(nil), b...)), keys)
		}
	})
}

func checkInspect(t *testing.T, b []byte, keys bool) {
	const limit = 1 << 16
	streamed, errS := Inspect(b, Inspection{MaxDecompressed: limit, RequireKeys: keys})
	n := 0
	orig := append([]byte(nil), b...)
	decoded, errD := Inspect(b, Inspection{MaxDecompressed: limit, RequireKeys: keys, Record: func(h Header, r Record) error {
		if h != streamedHeader(b) {
			t.Fatalf("callback header %+v differs from the batch's", h)
		}
		if r.OffsetDelta != int32(n) {
			t.Fatalf("record %d handed with offset delta %d", n, r.OffsetDelta)
		}
		if keys && r.Key == nil {
			t.Fatalf("record %d handed without the key it must have", n)
		}
		n++
		return nil
	}})
	if !bytes.Equal(b, orig) {
		t.Fatal("Inspect changed the batch")
	}
	for _, err := range []error{errS, errD} {
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrUnsupportedMagic) &&
			!errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrNullKey) {
			t.Fatalf("unclassified error: %v", err)
		}
	}
	if errors.Is(errS, ErrTooLarge) || errors.Is(errD, ErrTooLarge) {
		return
	}
	if (errS == nil) != (errD == nil) {
		t.Fatalf("streamed: %v; decoded: %v", errS, errD)
	}
	if errS != nil {
		// Which error a batch both keyless and corrupt gets depends on
		// which the walk meets first, and a stream meets a truncated
		// compressed section later than a whole decompression does.
		return
	}
	if streamed != decoded || streamed.Header != streamedHeader(b) {
		t.Fatalf("facts differ: streamed %+v, decoded %+v", streamed, decoded)
	}
	if n != int(decoded.NumRecords) {
		t.Fatalf("callback saw %d records, header says %d", n, decoded.NumRecords)
	}
	if h, err := Validate(b, limit); err != nil || h != streamed.Header {
		t.Fatalf("Validate disagrees with Inspect: %+v, %v", h, err)
	}
}

func streamedHeader(b []byte) Header {
	h, _ := ParseHeader(b)
	return h
}

// The Stamp methods keep the facts equal to the batch they patch.
func TestFactsStamp(t *testing.T) {
	b, err := Encode(BatchSpec{Codec: CodecLZ4, FirstTimestamp: 1_700_000_000_000}, testRecords(3))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Inspect(b, Inspection{MaxDecompressed: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	f.StampLeaderEpoch(b, 9)
	f.StampLogAppendTime(b, 1_800_000_000_000)
	h, err := ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if h != f.Header {
		t.Fatalf("facts %+v, batch %+v", f.Header, h)
	}
	if _, err := Inspect(b, Inspection{MaxDecompressed: 1 << 20}); err != nil {
		t.Fatalf("stamped batch no longer checks: %v", err)
	}
}

// An error from the Record callback stops the walk and comes back as it was.
func TestInspectCallbackError(t *testing.T) {
	b, err := Encode(BatchSpec{Codec: CodecZstd, FirstTimestamp: 1}, testRecords(4))
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	_, err = Inspect(b, Inspection{MaxDecompressed: 1 << 20, Record: func(Header, Record) error { n++; return stop }})
	if err != stop || n != 1 {
		t.Fatalf("got %v after %d records", err, n)
	}
}
