package record

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
)

// A produced batch is read once: Inspect parses its header, checks the
// length field and CRC-32C, and walks its records (decompressing a
// compressed batch once) to check their framing, count and offset deltas,
// and, for a compacted topic, that every record has a key. What it
// established travels on as Facts, so that no later step parses the
// header or decompresses the records again.

// Inspection says what Inspect checks beyond a batch's framing, CRC and
// record framing, and to whom it hands the records.
type Inspection struct {
	// MaxDecompressed bounds a compressed batch's records section
	// (ErrTooLarge past it).
	MaxDecompressed int
	// RequireKeys fails a record with a null key with ErrNullKey, as a
	// compacted topic requires.
	RequireKeys bool
	// Record, when set, is called with the batch's header and each record
	// in order, once the header, length and CRC were checked. The Record's
	// slices alias the batch or a pooled decompression buffer and are valid
	// only during the call; an error from Record stops the walk and is
	// returned unchanged. Without it a compressed batch is streamed through
	// a fixed buffer (see stream.go) instead of decompressed whole.
	Record func(Header, Record) error
}

// Facts are what Inspect established about one batch: its header, checked
// against the batch's bytes (length, CRC) and records (count, offset
// deltas, keys when asked). A Facts stays true of its batch as long as the
// batch is changed only through the Stamp methods.
type Facts struct {
	Header
}

// Inspect checks that b is exactly one well-formed v2 batch in one pass, as
// Validate does (and ValidateKeyed with in.RequireKeys), handing each
// record to in.Record when it is set. Errors are ErrCorrupt-class except
// ErrUnsupportedMagic, ErrTruncated (a slice shorter than a header),
// ErrTooLarge, ErrNullKey and those of in.Record.
func Inspect(b []byte, in Inspection) (Facts, error) {
	h, err := checkFraming(b)
	if err != nil {
		return Facts{}, err
	}
	body := b[HeaderSize:]
	c := h.Codec()
	if c != CodecNone && in.Record == nil {
		if err := validateStream(h, c, body, in.MaxDecompressed, in.RequireKeys); err != nil {
			return Facts{}, err
		}
		return Facts{Header: h}, nil
	}
	if c != CodecNone {
		buf := decodeBuffers.Get().(*decodeBuffer)
		defer decodeBuffers.Put(buf)
		if buf.b, err = decompressAppend(buf.b, c, body, max(in.MaxDecompressed, 0)); err != nil {
			return Facts{}, err
		}
		body = buf.b
		defer buf.release()
	}
	if err := walkRecords(h, body, in); err != nil {
		return Facts{}, err
	}
	return Facts{Header: h}, nil
}

// walkRecords checks the records section body of the batch with header h
// and hands each record to in.Record when it is set.
func walkRecords(h Header, body []byte, in Inspection) error {
	rr := recordReader{b: body, wantHeaders: in.Record != nil}
	n := 0
	for rr.pos < len(rr.b) {
		if n >= int(h.NumRecords) {
			return corruptf("%d bytes follow the %d records the header declares", len(rr.b)-rr.pos, h.NumRecords)
		}
		r, err := rr.next(n)
		if err != nil {
			return err
		}
		if r.OffsetDelta != int32(n) {
			return corruptf("record %d has offset delta %d", n, r.OffsetDelta)
		}
		if in.RequireKeys && r.Key == nil {
			return fmt.Errorf("%w (record %d)", ErrNullKey, n)
		}
		if in.Record != nil {
			if err := in.Record(h, r); err != nil {
				return err
			}
		}
		n++
	}
	if n != int(h.NumRecords) {
		return corruptf("header declares %d records, batch holds %d", h.NumRecords, n)
	}
	if n > 0 && h.LastOffsetDelta != int32(n-1) {
		return corruptf("last offset delta %d does not match %d records", h.LastOffsetDelta, n)
	}
	return nil
}

// decodeBuffer is a pooled decompression buffer for Inspect.
type decodeBuffer struct{ b []byte }

// release drops a buffer that grew past what is worth keeping, so that one
// huge batch does not pin its memory in the pool.
func (d *decodeBuffer) release() {
	if cap(d.b) > 4<<20 {
		d.b = nil
	}
}

var decodeBuffers = sync.Pool{New: func() any { return new(decodeBuffer) }}

// decompressions counts the records sections decompressed, whole or
// streamed, since the process started.
var decompressions atomic.Uint64

// Decompressions returns how many compressed records sections this process
// has decompressed, whole or streamed: a batch read twice counts twice.
func Decompressions() uint64 { return decompressions.Load() }

// StampLeaderEpoch writes the partition leader epoch into the batch b the
// facts describe, and into the facts. The CRC does not cover it.
func (f *Facts) StampLeaderEpoch(b []byte, epoch int32) {
	SetPartitionLeaderEpoch(b, epoch)
	f.PartitionLeaderEpoch = epoch
}

// StampLogAppendTime is SetLogAppendTime on the batch b the facts
// describe, keeping the facts (attributes, MaxTimestamp, CRC) equal to it.
func (f *Facts) StampLogAppendTime(b []byte, ts int64) {
	SetLogAppendTime(b, ts)
	f.Attributes |= attrLogAppendTime
	f.MaxTimestamp = ts
	f.CRC = binary.BigEndian.Uint32(b[posCRC:])
}
