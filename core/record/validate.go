package record

import (
	"fmt"
)

// checkFraming parses the header of b and checks the length field and CRC
// against b, which must be exactly one batch.
func checkFraming(b []byte) (Header, error) {
	h, err := ParseHeader(b)
	if err != nil {
		if len(b) >= HeaderSize || len(b) <= posMagic {
			return Header{}, err
		}
		// A short slice with a v2 magic byte is a batch too small to be one.
		if int8(b[posMagic]) == currentMagic {
			return Header{}, corruptf("batch of %d bytes is shorter than the %d-byte header", len(b), HeaderSize)
		}
		return Header{}, err
	}
	if h.Length < MinLength {
		return Header{}, corruptf("batch length %d is below the minimum %d", h.Length, MinLength)
	}
	if h.Size() != len(b) {
		return Header{}, corruptf("batch length field says %d bytes but the batch has %d", h.Size(), len(b))
	}
	if crc := Checksum(b); crc != h.CRC {
		return Header{}, corruptf("crc mismatch: stored %08x, computed %08x", h.CRC, crc)
	}
	if h.NumRecords < 0 {
		return Header{}, corruptf("negative record count %d", h.NumRecords)
	}
	if h.LastOffsetDelta < 0 {
		return Header{}, corruptf("negative last offset delta %d", h.LastOffsetDelta)
	}
	return h, nil
}

// Validate checks that b is exactly one well-formed v2 batch: magic 2, a length
// field matching len(b), a correct CRC-32C, and records that decode, number
// NumRecords, carry offset deltas 0..n-1 in order and end at
// LastOffsetDelta. A compressed batch is streamed through its decompressor
// with a fixed buffer (see stream.go), never held whole; its decompressed
// size is bounded by maxDecompressed bytes. A batch with zero records is
// returned without error; whether it is acceptable is the caller's
// decision. Errors are ErrCorrupt-class except ErrUnsupportedMagic and
// ErrTooLarge.
func Validate(b []byte, maxDecompressed int) (Header, error) {
	f, err := Inspect(b, Inspection{MaxDecompressed: maxDecompressed})
	return f.Header, err
}

// ValidateKeyed is Validate that also requires every record to have a key
// (a compacted topic's); a null key fails with ErrNullKey.
func ValidateKeyed(b []byte, maxDecompressed int) (Header, error) {
	f, err := Inspect(b, Inspection{MaxDecompressed: maxDecompressed, RequireKeys: true})
	return f.Header, err
}

// Records calls fn for each record of the batch b in order, decompressing with
// output bounded by maxDecompressed bytes. The Record passed to fn (its slices
// and headers) is valid only during the call. It checks the framing and CRC
// first; an error from fn stops the walk and is returned unchanged.
func Records(b []byte, maxDecompressed int, fn func(Record) error) error {
	h, err := checkFraming(b)
	if err != nil {
		return err
	}
	body := b[HeaderSize:]
	if c := h.Codec(); c != CodecNone {
		if body, err = Decompress(c, body, maxDecompressed); err != nil {
			return err
		}
	}
	rr := recordReader{b: body, wantHeaders: true}
	n := 0
	for ; rr.pos < len(rr.b); n++ {
		if n >= int(h.NumRecords) {
			return corruptf("%d bytes follow the %d records the header declares", len(rr.b)-rr.pos, h.NumRecords)
		}
		r, err := rr.next(n)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if n != int(h.NumRecords) {
		return corruptf("header declares %d records, batch holds %d", h.NumRecords, n)
	}
	return nil
}

// String is a short human description of a header for log messages.
func (h Header) String() string {
	return fmt.Sprintf("batch[offsets %d-%d, %d records, %d bytes, %s, epoch %d]",
		h.BaseOffset, h.LastOffset(), h.NumRecords, h.Size(), h.Codec(), h.PartitionLeaderEpoch)
}
