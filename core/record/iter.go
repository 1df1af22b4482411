package record

import (
	"encoding/binary"
	"fmt"
)

// BatchIterator splits a run of consecutive batches, such as a segment's bytes
// or a fetch response's records field. It checks framing only (length and
// magic), not CRCs. Use it as:
//
//	it := record.Batches(b)
//	for it.Next() {
//		h, batch := it.Header(), it.Batch()
//	}
//	if err := it.Err(); err != nil { ... }
type BatchIterator struct {
	buf   []byte
	pos   int // start of the next batch
	cur   int // start of the current batch
	h     Header
	batch []byte
	err   error
}

// Batches returns an iterator over the batches in b.
func Batches(b []byte) BatchIterator { return BatchIterator{buf: b} }

// Next advances to the next batch, reporting false at the end of the input or
// on an error. A partial trailing batch ends the walk with ErrTruncated.
func (it *BatchIterator) Next() bool {
	if it.err != nil {
		return false
	}
	rest := it.buf[it.pos:]
	if len(rest) == 0 {
		return false
	}
	if len(rest) < lengthOverhead {
		it.err = fmt.Errorf("%w: %d trailing bytes at position %d", ErrTruncated, len(rest), it.pos)
		return false
	}
	length := int32(binary.BigEndian.Uint32(rest[posLength:]))
	if len(rest) > posMagic && int8(rest[posMagic]) != currentMagic {
		it.err = fmt.Errorf("%w: magic %d at position %d", ErrUnsupportedMagic, int8(rest[posMagic]), it.pos)
		return false
	}
	if length < MinLength {
		it.err = corruptf("batch length %d at position %d is below the minimum %d", length, it.pos, MinLength)
		return false
	}
	size := int(length) + lengthOverhead
	if len(rest) < size {
		it.err = fmt.Errorf("%w: batch at position %d needs %d bytes, %d remain", ErrTruncated, it.pos, size, len(rest))
		return false
	}
	h, err := ParseHeader(rest)
	if err != nil {
		it.err = fmt.Errorf("position %d: %w", it.pos, err)
		return false
	}
	it.h, it.batch, it.cur = h, rest[:size:size], it.pos
	it.pos += size
	return true
}

// Header returns the current batch's header.
func (it *BatchIterator) Header() Header { return it.h }

// Batch returns the current batch's bytes, aliasing the input.
func (it *BatchIterator) Batch() []byte { return it.batch }

// Position returns the byte position of the current batch in the input.
func (it *BatchIterator) Position() int { return it.cur }

// Consumed returns the bytes of whole batches walked so far.
func (it *BatchIterator) Consumed() int { return it.pos }

// Err returns the error that ended the walk, nil at a clean end.
func (it *BatchIterator) Err() error { return it.err }
