package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// AbortedTxn is one entry of a segment's aborted-transaction index
// (.txnindex): a producer's transaction that spans FirstOffset to the abort
// marker at LastOffset. LastStableOffset is the partition's last stable
// offset once the abort was written; a reader of the index may stop at the
// first entry whose LastStableOffset reaches the end of what it fetched.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// The .txnindex file is Kafka's, byte for byte: 34-byte entries of
// version int16 (0) | producer_id int64 | first_offset int64 |
// last_offset int64 | last_stable_offset int64, appended in marker order.
const (
	txnEntrySize    = 34
	txnEntryVersion = 0
)

// EncodeAbortedTxns returns entries in the .txnindex format.
func EncodeAbortedTxns(entries []AbortedTxn) []byte {
	b := make([]byte, 0, len(entries)*txnEntrySize)
	for _, e := range entries {
		b = appendTxnEntry(b, e)
	}
	return b
}

func appendTxnEntry(b []byte, e AbortedTxn) []byte {
	b = binary.BigEndian.AppendUint16(b, txnEntryVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(e.ProducerID))
	b = binary.BigEndian.AppendUint64(b, uint64(e.FirstOffset))
	b = binary.BigEndian.AppendUint64(b, uint64(e.LastOffset))
	return binary.BigEndian.AppendUint64(b, uint64(e.LastStableOffset))
}

// DecodeAbortedTxns parses a .txnindex file. It returns the entries before
// the first bad one together with an error wrapping ErrCorruptIndex when the
// file is torn or an entry is implausible.
func DecodeAbortedTxns(b []byte) ([]AbortedTxn, error) {
	n := len(b) / txnEntrySize
	out := make([]AbortedTxn, 0, n)
	for i := 0; i < n; i++ {
		e := b[i*txnEntrySize:]
		if v := binary.BigEndian.Uint16(e); v != txnEntryVersion {
			return out, fmt.Errorf("%w: txn index entry %d has version %d", ErrCorruptIndex, i, v)
		}
		t := AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		}
		if t.ProducerID < 0 || t.FirstOffset < 0 || t.LastOffset < t.FirstOffset {
			return out, fmt.Errorf("%w: txn index entry %d: producer %d offsets %d..%d", ErrCorruptIndex, i,
				t.ProducerID, t.FirstOffset, t.LastOffset)
		}
		out = append(out, t)
	}
	if len(b)%txnEntrySize != 0 {
		return out, fmt.Errorf("%w: txn index of %d bytes is not a multiple of %d", ErrCorruptIndex, len(b), txnEntrySize)
	}
	return out, nil
}

// loadTxnIndex reads the segment's .txnindex, keeping the valid entries that
// lie in the segment. A damaged file is rewritten with what could be kept.
// The caller holds the Log's mu for writing, or has the log to itself.
func (l *Log) loadTxnIndex(s *segment) error {
	b, err := vfs.ReadFile(l.opts.FS, s.path(txnIndexSuffix))
	if errors.Is(err, fs.ErrNotExist) {
		s.aborted = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("log: %s: %w", s.path(txnIndexSuffix), err)
	}
	entries, derr := DecodeAbortedTxns(b)
	kept := entries[:0]
	for _, e := range entries {
		if e.LastOffset >= s.base && e.LastOffset < s.next {
			kept = append(kept, e)
		}
	}
	s.aborted = kept
	if derr != nil || len(kept) != len(entries) {
		if derr != nil {
			l.logger.Warn("log: repairing txn index", "segment", s.String(), "reason", derr.Error())
		}
		return s.rewriteTxnIndex()
	}
	return nil
}

// rewriteTxnIndex replaces the .txnindex with the in-memory entries, or
// removes it when there are none.
func (s *segment) rewriteTxnIndex() error {
	if len(s.aborted) == 0 {
		if err := s.fs.Remove(s.path(txnIndexSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("log: %w", err)
		}
		return nil
	}
	return writeFileSync(s.fs, s.path(txnIndexSuffix), EncodeAbortedTxns(s.aborted))
}

// truncateTxnIndex drops the entries whose abort marker is at or above to.
func (s *segment) truncateTxnIndex(to int64) error {
	n := len(s.aborted)
	for n > 0 && s.aborted[n-1].LastOffset >= to {
		n--
	}
	if n == len(s.aborted) {
		return nil
	}
	s.aborted = s.aborted[:n]
	return s.rewriteTxnIndex()
}

// AppendAbortedTxn records an aborted transaction in the .txnindex of the
// segment holding its abort marker (t.LastOffset), as Kafka does when it
// appends the marker. An entry already there for the same producer and
// marker is not written twice, so replaying markers after a restart is safe.
// The file is fsynced with its segment.
func (l *Log) AppendAbortedTxn(t AbortedTxn) error {
	if t.ProducerID < 0 || t.FirstOffset < 0 || t.LastOffset < t.FirstOffset {
		return fmt.Errorf("log: %s: aborted txn of producer %d with offsets %d..%d", l, t.ProducerID, t.FirstOffset, t.LastOffset)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	if t.LastOffset < l.segs[0].base || t.LastOffset >= l.active().next {
		return fmt.Errorf("log: %s: abort marker offset %d is outside the log", l, t.LastOffset)
	}
	s := l.segs[l.segmentFor(t.LastOffset)]
	for _, e := range s.aborted {
		if e.ProducerID == t.ProducerID && e.LastOffset == t.LastOffset {
			return nil
		}
	}
	f, err := l.opts.FS.OpenFile(s.path(txnIndexSuffix), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return l.fail(err)
	}
	_, err = f.Write(appendTxnEntry(nil, t))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return l.fail(err)
	}
	s.aborted = append(s.aborted, t)
	s.txnDirty.Store(true)
	if s != l.active() && !l.isUnflushed(s) {
		l.unflushed = append(l.unflushed, s)
	}
	return nil
}

func (l *Log) isUnflushed(s *segment) bool {
	for _, u := range l.unflushed {
		if u == s {
			return true
		}
	}
	return false
}

// AbortedTxns lists the aborted transactions a read_committed fetch of the
// offsets [from, upTo) must be told about: those whose abort marker is at or
// after from and whose first offset is below upTo, in marker order (Kafka's
// collectAbortedTransactions).
func (l *Log) AbortedTxns(from, upTo int64) []AbortedTxn {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil
	}
	var out []AbortedTxn
	for _, s := range l.segs[l.segmentFor(from):] {
		for _, e := range s.aborted {
			if e.LastOffset >= from && e.FirstOffset < upTo {
				out = append(out, e)
			}
		}
		if s.base >= upTo {
			break
		}
	}
	return out
}

// flushTxnIndex fsyncs the .txnindex when entries were appended since the
// last flush.
func (s *segment) flushTxnIndex() error {
	if !s.txnDirty.Swap(false) {
		return nil
	}
	if err := syncPath(s.fs, s.path(txnIndexSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.txnDirty.Store(true)
		return fmt.Errorf("%w: fsync %s: %w", ErrStorage, s.path(txnIndexSuffix), err)
	}
	return nil
}
