package log

import (
	"fmt"
	"os"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// The active segment's index files are written in batches, as Kafka's
// memory-mapped indexes reach the disk: an append adds its entries to the heap
// index only; a flush writes the entries the files lack and fsyncs them
// (recovery trusts the index files of segments below the recovery point, which
// only a flush advances), a roll writes them and leaves the fsync to the next
// flush, a close does both. Each write opens the file and closes it again, so a
// partition holds its active segment's .log open and nothing else: 10,000 idle
// or busy partitions need 10,000 descriptors, not 30,000. After a crash the
// segments from the recovery point on are scanned and their indexes rebuilt.

// indexTail is what one index file lacks: the heap index from byte at on.
type indexTail struct {
	at int
	b  []byte
}

// indexTails are the segment's unwritten index entries, copied; none unless
// the segment is active. The caller holds the Log's mu.
func (s *segment) indexTails() tails {
	si := s.idx.Load()
	if !s.appendable || si == nil {
		return tails{}
	}
	return tails{
		off: indexTail{s.offWritten, append([]byte(nil), si.off[min(s.offWritten, len(si.off)):]...)},
		tim: indexTail{s.timWritten, append([]byte(nil), si.tim[min(s.timWritten, len(si.tim)):]...)},
	}
}

// tails is a segment's pair of index tails.
type tails struct{ off, tim indexTail }

// segFlush is a segment to fsync as the caller saw it under the Log's mu: the
// index entries its files lack and whether earlier writes await an fsync.
type segFlush struct {
	s      *segment
	t      tails
	writes uint64 // s.idxWrites then
	synced bool   // no index write awaited an fsync then
}

// toFlush captures s for flush; the caller holds the Log's mu.
func (s *segment) toFlush() segFlush {
	return segFlush{s: s, t: s.indexTails(), writes: s.idxWrites, synced: s.idxWrites == s.idxSynced}
}

// flush fsyncs the .log file and writes and fsyncs what the index files
// lack or owe. The caller holds flushMu and, for a segment another goroutine
// may append to, not mu: what it writes was copied under mu.
func (f segFlush) flush() error {
	s := f.s
	lf, err := s.file()
	if err != nil {
		return err
	}
	if err := lf.Sync(); err != nil {
		return fmt.Errorf("%w: fsync %s: %w", ErrStorage, s, err)
	}
	for _, x := range []struct {
		t      indexTail
		suffix string
	}{{f.t.off, indexSuffix}, {f.t.tim, timeIndexSuffix}} {
		if len(x.t.b) == 0 && f.synced {
			continue
		}
		if err := writeIndexTail(s.fs, s.path(x.suffix), x.t, true); err != nil {
			return err
		}
	}
	return s.flushTxnIndex()
}

// flushed records a successful flush of f; the caller holds the Log's mu for
// writing.
func (s *segment) flushed(f segFlush) {
	s.wroteTails(f.t)
	s.idxSynced = max(s.idxSynced, f.writes)
}

// writeTails writes both tails, fsyncing them when sync is set. The caller
// holds the Log's mu for writing.
func (s *segment) writeTails(t tails, sync bool) error {
	for _, x := range []struct {
		t      indexTail
		suffix string
	}{{t.off, indexSuffix}, {t.tim, timeIndexSuffix}} {
		if len(x.t.b) == 0 {
			continue
		}
		if err := writeIndexTail(s.fs, s.path(x.suffix), x.t, sync); err != nil {
			return err
		}
		if !sync {
			s.idxWrites++
		}
	}
	return nil
}

// wroteTails records that the files hold the tails t; the caller holds the
// Log's mu for writing. A roll may have written further already.
func (s *segment) wroteTails(t tails) {
	s.offWritten = max(s.offWritten, t.off.at+len(t.off.b))
	s.timWritten = max(s.timWritten, t.tim.at+len(t.tim.b))
}

// writeIndexTail writes t into the index file at path and, when sync is set,
// fsyncs it.
func writeIndexTail(fsys vfs.FS, path string, t indexTail, sync bool) error {
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%w: open %s: %w", ErrStorage, path, err)
	}
	if len(t.b) > 0 {
		_, err = f.WriteAt(t.b, int64(t.at))
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrStorage, path, err)
	}
	return nil
}

// truncateIndexFiles cuts the index files to the heap indexes si, which a
// truncation shortened, where the files hold more. The caller holds flushMu
// and the Log's mu for writing.
func (s *segment) truncateIndexFiles(si *segIndex) error {
	for _, x := range []struct {
		written *int
		size    int
		suffix  string
	}{{&s.offWritten, len(si.off), indexSuffix}, {&s.timWritten, len(si.tim), timeIndexSuffix}} {
		if *x.written <= x.size {
			continue
		}
		f, err := s.fs.OpenFile(s.path(x.suffix), os.O_RDWR|os.O_CREATE, 0o644)
		if err == nil {
			err = f.Truncate(int64(x.size))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("log: truncate %s: %w", s.path(x.suffix), err)
		}
		*x.written = x.size
		s.idxWrites++
	}
	return nil
}
