package log

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/gregorbroker/gregor/core/record"
)

// scanBufSize is the read window for walking batch headers in a segment file.
const scanBufSize = 64 << 10

var scanBufs = sync.Pool{New: func() any { b := make([]byte, scanBufSize); return &b }}

// fileScanner reads a file through a window so that walking consecutive batch
// headers costs one read per window, not one per batch.
type fileScanner struct {
	f   io.ReaderAt
	end int64 // readable bytes
	buf *[]byte
	off int64 // file position of (*buf)[0]
	n   int   // valid bytes in the window
}

func newFileScanner(f io.ReaderAt, end int64) *fileScanner {
	return &fileScanner{f: f, end: end, buf: scanBufs.Get().(*[]byte), off: -1}
}

func (s *fileScanner) release() {
	if s.buf != nil {
		scanBufs.Put(s.buf)
		s.buf = nil
	}
}

// window returns the bytes from pos: at least need of them unless the file
// ends first. need must not exceed scanBufSize.
func (s *fileScanner) window(pos int64, need int) ([]byte, error) {
	if s.off >= 0 && pos >= s.off && pos+int64(need) <= s.off+int64(s.n) {
		return (*s.buf)[pos-s.off : s.n], nil
	}
	l := min(int64(len(*s.buf)), s.end-pos)
	if l <= 0 {
		return nil, nil
	}
	n, err := s.f.ReadAt((*s.buf)[:l], pos)
	if err != nil && !errors.Is(err, io.EOF) {
		s.off = -1
		return nil, err
	}
	s.off, s.n = pos, n
	return (*s.buf)[:n], nil
}

// batchCRC computes the CRC-32C of the batch of size bytes at pos.
func (s *fileScanner) batchCRC(pos int64, size int) (uint32, error) {
	if size > len(*s.buf) {
		return s.crc(pos, size)
	}
	w, err := s.window(pos, size)
	if err != nil {
		return 0, err
	}
	if len(w) < size {
		return 0, fmt.Errorf("%w: position %d: batch of %d bytes runs past the end", record.ErrTruncated, pos, size)
	}
	return record.Checksum(w[:size]), nil
}

// crc computes a batch's CRC-32C when the batch does not fit in the window,
// streaming the covered bytes through the buffer.
func (s *fileScanner) crc(pos int64, size int) (uint32, error) {
	var crc uint32
	p, end := pos+record.CRCStart, pos+int64(size)
	s.off = -1 // the window is reused as the streaming buffer
	for p < end {
		chunk := (*s.buf)[:min(int64(len(*s.buf)), end-p)]
		n, err := s.f.ReadAt(chunk, p)
		if n < len(chunk) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		crc = record.UpdateChecksum(crc, chunk)
		p += int64(n)
	}
	return crc, nil
}

// header reads the batch header at pos. A tail too short to hold a batch is
// ErrTruncated; a header that cannot start a v2 batch is ErrCorrupt.
func (s *fileScanner) header(pos int64) (record.Header, error) {
	w, err := s.window(pos, record.HeaderSize)
	if err != nil {
		return record.Header{}, err
	}
	h, err := record.ParseHeader(w)
	switch {
	case errors.Is(err, record.ErrUnsupportedMagic):
		return record.Header{}, fmt.Errorf("%w: position %d: %v", ErrCorrupt, pos, err)
	case err != nil:
		return record.Header{}, fmt.Errorf("position %d: %w", pos, err)
	case h.Length < record.MinLength:
		return record.Header{}, fmt.Errorf("%w: position %d: batch length %d is below the minimum %d", ErrCorrupt, pos, h.Length, record.MinLength)
	case pos+int64(h.Size()) > s.end:
		return record.Header{}, fmt.Errorf("%w: position %d: batch of %d bytes runs past the end at %d", record.ErrTruncated, pos, h.Size(), s.end)
	}
	return h, nil
}

// walkOptions say what walkBatches checks beyond framing.
type walkOptions struct {
	base    int64 // the segment's base offset
	minNext int64 // the first batch may not start below this offset
	crc     bool  // verify each batch's CRC
}

// walkBatches visits the batches of a segment file from start to end in
// order. It stops at the first batch that is torn (ErrTruncated) or invalid
// (ErrCorrupt): a bad length or magic, a CRC mismatch when asked, offsets that
// go backwards or do not fit the segment's relative offsets. It returns the
// position where valid data ends and why it ended early; an I/O error is
// returned as is.
func walkBatches(f io.ReaderAt, start, end int64, o walkOptions, fn func(pos int64, h record.Header) error) (int64, error) {
	s := newFileScanner(f, end)
	defer s.release()
	next := o.minNext
	pos := start
	for pos < end {
		h, err := s.header(pos)
		if err != nil {
			return pos, err
		}
		switch {
		case h.LastOffsetDelta < 0:
			return pos, fmt.Errorf("%w: position %d: negative last offset delta %d", ErrCorrupt, pos, h.LastOffsetDelta)
		case h.NumRecords < 0:
			return pos, fmt.Errorf("%w: position %d: negative record count %d", ErrCorrupt, pos, h.NumRecords)
		case h.BaseOffset < next || h.BaseOffset < o.base:
			return pos, fmt.Errorf("%w: position %d: offset %d goes back before %d", ErrCorrupt, pos, h.BaseOffset, max(next, o.base))
		case h.BaseOffset > math.MaxInt64-int64(h.LastOffsetDelta)-1 || h.LastOffset()-o.base > math.MaxInt32:
			return pos, fmt.Errorf("%w: position %d: last offset %d does not fit segment %d", ErrCorrupt, pos, h.LastOffset(), o.base)
		}
		if o.crc {
			crc, err := s.batchCRC(pos, h.Size())
			if err != nil {
				return pos, err
			}
			if crc != h.CRC {
				return pos, fmt.Errorf("%w: position %d: crc mismatch: stored %08x, computed %08x", ErrCorrupt, pos, h.CRC, crc)
			}
		}
		if fn != nil {
			if err := fn(pos, h); err != nil {
				return pos, err
			}
		}
		next = h.NextOffset()
		pos += int64(h.Size())
	}
	return pos, nil
}

// isDataError reports whether err describes bad data rather than failed I/O.
func isDataError(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, record.ErrTruncated)
}
