package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Validating a compressed batch streams its records section through the
// decompressor and a fixed-size buffer, skipping keys, values and headers
// instead of holding them: memory stays at streamBufSize plus the
// decompressor's own state (for snappy, one block) whatever the batch
// expands to. The decompressed size is still bounded, by the caller's
// limit, to bound the CPU a batch can cost.

// streamBufSize is the read buffer of a streamed validation.
const streamBufSize = 32 << 10

// ErrNullKey marks a record without a key where one is required.
var ErrNullKey = errors.New("record: null key")

// recordStream reads a records section from a decompressor, counting
// what the current record and the whole section have consumed.
type recordStream struct {
	br    *bufio.Reader
	left  int // bytes of the current record not yet consumed
	total int // bytes consumed in the section
	limit int
}

// need consumes n bytes of the current record, checking both bounds.
func (s *recordStream) need(n, index int) error {
	if n > s.left {
		return corruptf("record %d: a field runs past the record's end", index)
	}
	s.left -= n
	s.total += n
	if s.total > s.limit {
		return fmt.Errorf("%w: output exceeds the limit of %d bytes", ErrTooLarge, s.limit)
	}
	return nil
}

// varint reads a zigzag varint of at most maxLen bytes.
func (s *recordStream) varint(maxLen, index int, what string) (int64, error) {
	p, err := s.br.Peek(min(maxLen, max(1, s.left)))
	if len(p) == 0 {
		if errors.Is(err, io.EOF) {
			return 0, corruptf("record %d: %s truncated", index, what)
		}
		return 0, err
	}
	var v int64
	var n int
	if maxLen == 5 {
		var v32 int32
		v32, n = readVarint(p)
		v = int64(v32)
	} else {
		v, n = readVarlong(p)
	}
	if n == 0 {
		return 0, corruptf("record %d: malformed %s", index, what)
	}
	if err := s.need(n, index); err != nil {
		return 0, err
	}
	s.br.Discard(n)
	return v, nil
}

// skip consumes n bytes of the current record.
func (s *recordStream) skip(n, index int, what string) error {
	if err := s.need(n, index); err != nil {
		return err
	}
	if d, err := s.br.Discard(n); d != n {
		return corruptf("record %d: %s truncated: %v", index, what, err)
	}
	return nil
}

// lengthPrefixed reads a varint length (-1 = null) and skips that many
// bytes; it reports whether the field was null.
func (s *recordStream) lengthPrefixed(index int, what string) (null bool, err error) {
	l, err := s.varint(5, index, what)
	if err != nil {
		return false, err
	}
	if l == -1 {
		return true, nil
	}
	if l < -1 || int(l) > s.left {
		return false, corruptf("record %d: %s length %d exceeds the %d bytes left", index, what, l, s.left)
	}
	return false, s.skip(int(l), index, what)
}

// buffered checks the next record in place when it fits in the buffer
// (the common case); done is false when it does not and the record must
// be streamed field by field.
func (s *recordStream) buffered(index int, requireKey bool) (done bool, err error) {
	p, _ := s.br.Peek(5)
	length, n := readVarint(p)
	if n == 0 || length < 1 || n+int(length) > streamBufSize {
		return false, nil
	}
	size := n + int(length)
	q, _ := s.br.Peek(size)
	if len(q) < size {
		return false, nil // truncated: the field walk names the field
	}
	rr := recordReader{b: q}
	r, err := rr.next(index)
	if err != nil {
		return true, err
	}
	if r.OffsetDelta != int32(index) {
		return true, corruptf("record %d has offset delta %d", index, r.OffsetDelta)
	}
	if requireKey && r.Key == nil {
		return true, fmt.Errorf("%w (record %d)", ErrNullKey, index)
	}
	if s.total += size; s.total > s.limit {
		return true, fmt.Errorf("%w: output exceeds the limit of %d bytes", ErrTooLarge, s.limit)
	}
	s.br.Discard(size)
	return true, nil
}

// record checks the next record; it returns io.EOF at the section's end.
func (s *recordStream) record(index int, requireKey bool) error {
	if _, err := s.br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return err
	}
	if done, err := s.buffered(index, requireKey); done || err != nil {
		return err
	}
	s.left = 5
	length, err := s.varint(5, index, "length")
	if err != nil {
		return err
	}
	if length < 1 {
		return corruptf("record %d: length %d", index, length)
	}
	s.left = int(length)
	if err := s.skip(1, index, "attributes"); err != nil {
		return err
	}
	if _, err := s.varint(10, index, "timestamp delta"); err != nil {
		return err
	}
	delta, err := s.varint(5, index, "offset delta")
	if err != nil {
		return err
	}
	if delta != int64(index) {
		return corruptf("record %d has offset delta %d", index, delta)
	}
	null, err := s.lengthPrefixed(index, "key")
	if err != nil {
		return err
	}
	if null && requireKey {
		return fmt.Errorf("%w (record %d)", ErrNullKey, index)
	}
	if _, err := s.lengthPrefixed(index, "value"); err != nil {
		return err
	}
	count, err := s.varint(5, index, "header count")
	if err != nil {
		return err
	}
	if count < 0 || int(count) > s.left/2 {
		return corruptf("record %d: header count %d does not fit in %d bytes", index, count, s.left)
	}
	for i := range int(count) {
		null, err := s.lengthPrefixed(index, "header key")
		if err != nil {
			return err
		}
		if null {
			return corruptf("record %d: header %d has a null key", index, i)
		}
		if _, err := s.lengthPrefixed(index, "header value"); err != nil {
			return err
		}
	}
	if s.left != 0 {
		return corruptf("record %d: %d bytes left over inside the record", index, s.left)
	}
	return nil
}

// streamState is one validation's reusable state.
type streamState struct {
	br     *bufio.Reader
	src    bytes.Reader
	snappy snappyReader
}

var streamStates = sync.Pool{New: func() any {
	return &streamState{br: bufio.NewReaderSize(nil, streamBufSize)}
}}

// validateStream checks the records of a compressed batch with header h.
func validateStream(h Header, c Codec, body []byte, limit int, requireKey bool) error {
	decompressions.Add(1)
	st := streamStates.Get().(*streamState)
	defer streamStates.Put(st)
	st.src.Reset(body)
	src, err := st.open(c, body)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, c, err)
	}
	defer st.close(c, src)
	st.br.Reset(src)
	defer st.br.Reset(nil)
	s := recordStream{br: st.br, limit: max(limit, 0)}
	n := 0
	for ; ; n++ {
		err := s.record(n, requireKey)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrNullKey) {
				return err
			}
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, c, err)
		}
		if n >= int(h.NumRecords) {
			return corruptf("records follow the %d records the header declares", h.NumRecords)
		}
	}
	if n != int(h.NumRecords) {
		return corruptf("header declares %d records, batch holds %d", h.NumRecords, n)
	}
	if n > 0 && h.LastOffsetDelta != int32(n-1) {
		return corruptf("last offset delta %d does not match %d records", h.LastOffsetDelta, n)
	}
	return nil
}

// open returns a streaming reader of body (already in st.src) compressed
// with c, its state taken from the decompressor pools.
func (st *streamState) open(c Codec, body []byte) (io.Reader, error) {
	switch c {
	case CodecGzip:
		if v := gzipReaders.Get(); v != nil {
			r := v.(*gzip.Reader)
			if err := r.Reset(&st.src); err != nil {
				gzipReaders.Put(r)
				return nil, err
			}
			return r, nil
		}
		return gzip.NewReader(&st.src)
	case CodecLZ4:
		r := lz4Readers.Get().(*lz4.Reader)
		r.Reset(&st.src)
		return r, nil
	case CodecZstd:
		d := zstdReaders.Get().(*zstd.Decoder)
		if err := d.Reset(&st.src); err != nil {
			zstdReaders.Put(d)
			return nil, err
		}
		return d, nil
	case CodecSnappy:
		st.snappy.reset(body)
		return &st.snappy, nil
	}
	return nil, corruptf("unknown compression codec %d", int8(c))
}

// close returns src's state to its pool.
func (st *streamState) close(c Codec, src io.Reader) {
	switch c {
	case CodecGzip:
		gzipReaders.Put(src)
	case CodecLZ4:
		r := src.(*lz4.Reader)
		r.Reset(nil)
		lz4Readers.Put(r)
	case CodecZstd:
		d := src.(*zstd.Decoder)
		st.src.Reset(nil)
		_ = d.Reset(&st.src)
		zstdReaders.Put(d)
	case CodecSnappy:
		st.snappy.reset(nil)
	}
}

// snappyReader decodes xerial-framed snappy one chunk at a time (a raw
// snappy block is decoded whole: the format has no smaller unit).
type snappyReader struct {
	chunks []byte // xerial chunks not yet decoded
	raw    []byte // a raw block not yet decoded
	out    []byte // decoded bytes not yet read
	buf    []byte
}

func (r *snappyReader) reset(src []byte) {
	r.chunks, r.raw, r.out = nil, nil, nil
	if cap(r.buf) > 1<<20 {
		r.buf = nil // one huge block does not pin its buffer
	}
	if src == nil {
		return
	}
	if len(src) >= xerialHeaderLen && bytes.Equal(src[:len(xerialMagic)], xerialMagic) {
		r.chunks = src[xerialHeaderLen:]
	} else {
		r.raw = src
	}
}

func (r *snappyReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		var block []byte
		switch {
		case r.raw != nil:
			block, r.raw = r.raw, nil
		case len(r.chunks) > 0:
			if len(r.chunks) < 4 {
				return 0, errors.New("xerial chunk header truncated")
			}
			n := binary.BigEndian.Uint32(r.chunks)
			r.chunks = r.chunks[4:]
			if uint64(n) > uint64(len(r.chunks)) {
				return 0, fmt.Errorf("xerial chunk of %d bytes exceeds the %d left", n, len(r.chunks))
			}
			block, r.chunks = r.chunks[:n], r.chunks[n:]
		default:
			return 0, io.EOF
		}
		n, err := s2.DecodedLen(block)
		if err != nil {
			return 0, err
		}
		// A snappy element yields at most 64 bytes from 2, so a block
		// declaring more is corrupt, and its buffer is bounded by the
		// block rather than by what it declares.
		if n > 32*len(block)+64 {
			return 0, fmt.Errorf("snappy block of %d bytes declares %d", len(block), n)
		}
		if cap(r.buf) < n {
			r.buf = make([]byte, n)
		}
		out, err := s2.Decode(r.buf[:n], block)
		if err != nil {
			return 0, err
		}
		r.out = out
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}
