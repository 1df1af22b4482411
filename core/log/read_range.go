package log

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/gregorbroker/gregor/core/record"
)

// FileRange is a run of whole batches in a segment's .log file, for a
// response that sends file bytes to a socket without copying them through
// user space (sendfile). FD is a duplicate descriptor of the segment file: it
// stays valid when the segment is closed, deleted or swapped by the cleaner,
// until Close. Bytes truncated from the file after the read are not there to
// send; the writer then closes the connection (the batches' CRCs protect the
// reader from anything else).
type FileRange struct {
	FD  int
	Pos int64
	Len int
	// NextOffset is the offset after the last batch in the range.
	NextOffset int64
}

// Close releases the duplicate descriptor; a zero FileRange needs none.
func (r FileRange) Close() {
	if r.Len > 0 {
		closeDup(r.FD)
		openRanges.Add(-1)
	}
}

// MaxOpenRanges bounds the duplicate descriptors all file ranges hold at
// once; past it ReadRange declines and readers copy the bytes instead, so no
// client, however many fetches it leaves unread, can exhaust descriptors.
var MaxOpenRanges int64 = 4096

var openRanges atomic.Int64

var errStopWalk = errors.New("log: stop walk")

// ReadRange is Read for a zero-copy send: the same batches, as a range of the
// segment file instead of bytes. ok is false when the range cannot be given
// (the file system is not the operating system's, the platform has no
// sendfile, too many ranges are open) and the caller should use Read; a zero
// Len with ok set means nothing lies below maxOffset.
func (l *Log) ReadRange(offset int64, maxBytes int, maxOffset int64, minOneBatch bool) (r FileRange, ok bool, err error) {
	if !zeroCopyPlatform {
		return FileRange{}, false, nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return FileRange{}, true, ErrClosed
	}
	if err := l.health.offline(); err != nil {
		return FileRange{}, true, err
	}
	leo := l.active().next
	if offset < l.logStart || offset > leo {
		return FileRange{}, true, fmt.Errorf("%w: log %s: offset %d outside [%d, %d]", ErrOffsetOutOfRange, l, offset, l.logStart, leo)
	}
	if offset == leo || offset >= maxOffset {
		return FileRange{}, true, nil
	}
	s, si, pos, h, found, err := l.locate(offset)
	if err != nil || !found || h.LastOffset() >= maxOffset {
		return FileRange{}, true, err
	}
	f, err := s.file()
	if err != nil {
		return FileRange{}, true, err
	}
	if _, osFile := f.(*os.File); !osFile {
		// A wrapped file system (vfs/errorfs) sees every read.
		return FileRange{}, false, nil
	}
	end := s.size
	if maxOffset < s.next {
		if p, _, found, err := s.translate(si, maxOffset, pos); err != nil {
			return FileRange{}, true, err
		} else if found {
			end = p
		}
	}
	n := min(int64(max(maxBytes, 0)), end-pos)
	if n < int64(h.Size()) {
		if !minOneBatch {
			return FileRange{}, true, nil
		}
		n = int64(h.Size())
	}
	// The batches that fit whole, found by their headers alone.
	whole, next := pos, int64(-1)
	_, werr := walkBatches(s, pos, pos+n, walkOptions{base: s.base, minNext: s.base}, func(bp int64, bh record.Header) error {
		if bp+int64(bh.Size()) > pos+n || bh.LastOffset() >= maxOffset {
			return errStopWalk
		}
		whole, next = bp+int64(bh.Size()), bh.NextOffset()
		return nil
	})
	switch {
	case werr != nil && !errors.Is(werr, errStopWalk) && !isDataError(werr):
		return FileRange{}, true, fmt.Errorf("log: read %s: %w", s, werr)
	case whole == pos:
		return FileRange{}, true, fmt.Errorf("%w: log %s: segment %s at position %d: %v", ErrCorrupt, l, s, pos, werr)
	}
	if openRanges.Add(1) > MaxOpenRanges {
		openRanges.Add(-1)
		return FileRange{}, false, nil
	}
	fd, err := dupFD(f.Fd())
	if err != nil {
		openRanges.Add(-1)
		return FileRange{}, false, nil
	}
	return FileRange{FD: fd, Pos: pos, Len: int(whole - pos), NextOffset: next}, true, nil
}

// OpenRanges is how many file ranges hold a descriptor now.
func OpenRanges() int64 { return openRanges.Load() }
