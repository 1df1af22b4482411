package protocol

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// FileBytes is a run of a file's bytes that a response carries without
// holding them: the writer sends them from the file to the socket (sendfile
// on a plain TCP connection; one copy through a buffer on TLS or where the
// platform has no sendfile). FD stays open until Release.
type FileBytes struct {
	FD      int
	Off     int64
	Len     int
	Release func()
}

// Splice holds the file runs of one response. A handler puts the marker Add
// returns where the run's bytes belong (a fetch partition's records field);
// the writer finds each marker in the encoded response, rewrites the length
// in front of it and sends the file's bytes in its place. A marker is 16
// bytes no client can predict, so nothing else in a response matches one.
type Splice struct {
	// Flexible is set for responses of flexible versions, whose byte
	// fields carry an unsigned-varint length; classic ones an int32.
	Flexible bool

	mu    sync.Mutex // the long-poll writer and the quota hook may both look
	id    uint32
	files []FileBytes
}

// markerKey starts every marker of this process; the counter makes each
// splice's markers its own.
var (
	markerKey  [8]byte
	spliceSeq  atomic.Uint32
	markerOnce sync.Once
)

const markerLen = 16

// NewSplice starts the file runs of one response.
func NewSplice(flexible bool) *Splice {
	markerOnce.Do(func() { _, _ = rand.Read(markerKey[:]) })
	return &Splice{Flexible: flexible, id: spliceSeq.Add(1)}
}

// Add takes f into the response and returns its marker.
func (s *Splice) Add(f FileBytes) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make([]byte, markerLen)
	s.marker(m, len(s.files))
	s.files = append(s.files, f)
	return m
}

func (s *Splice) marker(m []byte, i int) {
	copy(m, markerKey[:])
	binary.BigEndian.PutUint32(m[8:], s.id)
	binary.BigEndian.PutUint32(m[12:], uint32(i))
}

// ExtraBytes is how many more bytes the response sends than its encoding
// holds: each run's length less its marker's.
func (s *Splice) ExtraBytes() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.files {
		n += f.Len - markerLen
	}
	return n
}

// minRunCharge is the least a file run counts in its connection's queued
// response bytes: each run holds a descriptor until it is written, so a
// client that reads nothing is muted after a bounded number of runs however
// small their batches are.
const minRunCharge = 4 << 10

// QueuedBytes is what the response's runs count in the connection's queued
// response bytes beyond their markers: each run's length, at least
// minRunCharge.
func (s *Splice) QueuedBytes() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.files {
		n += max(f.Len, minRunCharge) - markerLen
	}
	return n
}

// Reset releases every run taken so far (a long poll reads again).
func (s *Splice) Reset() {
	if s == nil {
		return
	}
	s.mu.Lock()
	files := s.files
	s.files = nil
	s.mu.Unlock()
	for _, f := range files {
		if f.Release != nil {
			f.Release()
		}
	}
}

// Release is Reset once the response is written or dropped.
func (s *Splice) Release() { s.Reset() }

// piece is one part of a spliced response on the wire: bytes, or a file run.
type piece struct {
	b []byte
	f *FileBytes
}

var errMarker = errors.New("protocol: spliced response: a marker's length prefix is not the marker's")

// split cuts an encoded response (4-byte size first) at the markers of s and
// returns what goes on the wire in order, with the size and the length
// prefixes rewritten for the file runs, and the total bytes.
func (s *Splice) split(enc []byte) ([]piece, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// One pass over the encoding: every marker of this splice starts with
	// the same 12 bytes and ends with its run's index.
	type hit struct{ pos, i int }
	var hits []hit
	prefix := make([]byte, markerLen)
	s.marker(prefix, 0)
	prefix = prefix[:markerLen-4]
	seen := make([]bool, len(s.files))
	for at := 4; at < len(enc); {
		p := bytes.Index(enc[at:], prefix)
		if p < 0 || at+p+markerLen > len(enc) {
			break
		}
		pos := at + p
		i := int(binary.BigEndian.Uint32(enc[pos+markerLen-4:]))
		if i >= len(s.files) || seen[i] {
			return nil, 0, errMarker
		}
		seen[i] = true
		hits = append(hits, hit{pos, i})
		at = pos + markerLen
	}
	pieces := make([]piece, 0, 2+3*len(hits))
	size := make([]byte, 4)
	pieces = append(pieces, piece{b: size})
	total := len(enc) - 4
	from := 4
	for _, h := range hits {
		f := &s.files[h.i]
		var prefix []byte
		var old int
		if s.Flexible {
			// A compact byte field: uvarint(length + 1).
			if h.pos < 1 || enc[h.pos-1] != markerLen+1 {
				return nil, 0, errMarker
			}
			old, prefix = 1, binary.AppendUvarint(nil, uint64(f.Len)+1)
		} else {
			if h.pos < 4 || binary.BigEndian.Uint32(enc[h.pos-4:]) != markerLen {
				return nil, 0, errMarker
			}
			old, prefix = 4, binary.BigEndian.AppendUint32(nil, uint32(f.Len))
		}
		if h.pos-old < from {
			return nil, 0, errMarker
		}
		pieces = append(pieces, piece{b: enc[from : h.pos-old]}, piece{b: prefix}, piece{f: f})
		total += len(prefix) - old + f.Len - markerLen
		from = h.pos + markerLen
	}
	pieces = append(pieces, piece{b: enc[from:]})
	if total > 1<<31-1 {
		return nil, 0, fmt.Errorf("protocol: spliced response of %d bytes", total)
	}
	binary.BigEndian.PutUint32(size, uint32(total))
	return pieces, total + 4, nil
}

// copyBufs are the buffers file runs are copied through where they cannot
// be sent from the file directly.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// writePieces writes a split response: byte pieces gathered into one
// vectored write, file runs by sendfile on a plain TCP connection, through
// a buffer otherwise. A file shorter than its run (truncated since the read)
// is an error: the frame cannot be finished and the connection must close.
// It returns how many bytes went by sendfile.
func writePieces(c net.Conn, pieces []piece, timeout time.Duration) (direct int, err error) {
	tc, canSend := c.(*net.TCPConn)
	canSend = canSend && sendfilePlatform
	var pending net.Buffers
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		c.SetWriteDeadline(time.Now().Add(timeout))
		_, err := pending.WriteTo(c)
		pending = pending[:0]
		return err
	}
	for _, p := range pieces {
		if p.f == nil {
			if len(p.b) > 0 {
				pending = append(pending, p.b)
			}
			continue
		}
		if err := flush(); err != nil {
			return direct, err
		}
		if canSend {
			err = sendFile(tc, p.f, timeout)
			direct += p.f.Len
		} else {
			err = copyFile(c, p.f, timeout)
		}
		if err != nil {
			return direct, err
		}
	}
	return direct, flush()
}

// copyFile sends a run through a pooled buffer, one copy.
func copyFile(c net.Conn, f *FileBytes, timeout time.Duration) error {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	off, left := f.Off, f.Len
	for left > 0 {
		n, err := preadFD(f.FD, buf[:min(left, len(buf))], off)
		if err != nil {
			return fmt.Errorf("protocol: read file run: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("protocol: file run at %d: %w (%d bytes short)", off, io.ErrUnexpectedEOF, left)
		}
		c.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := c.Write(buf[:n]); err != nil {
			return err
		}
		off, left = off+int64(n), left-n
	}
	return nil
}
