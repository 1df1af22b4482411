package log

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gregorbroker/gregor/core/record"
)

// recoverSwaps finishes compactions interrupted by a crash, before the
// directory's segments are listed. A "<base>.log.swap" file was fsynced
// before it was given that name, so it is a complete replacement for every
// segment whose base offset lies in [base, its next offset): those segments
// are deleted and the swap file takes the plain name. Its index files are
// dropped and rebuilt when the segment is loaded. Files of a compaction that
// never reached the swap (".cleaned") are deleted by listSegments.
func (l *Log) recoverSwaps() error {
	entries, err := l.opts.FS.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("log: %s: %w", l, err)
	}
	var swaps []int64
	logs := map[int64]bool{}
	var indexSwaps []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		switch {
		case strings.HasSuffix(name, logSuffix+swapSuffix):
			if base, ok := parseBase(strings.TrimSuffix(name, swapSuffix), logSuffix); ok {
				swaps = append(swaps, base)
			}
		case strings.HasSuffix(name, swapSuffix):
			indexSwaps = append(indexSwaps, name)
		case filepath.Ext(name) == logSuffix:
			if base, ok := parseBase(name, logSuffix); ok {
				logs[base] = true
			}
		}
	}
	for _, name := range indexSwaps {
		if err := l.removeFile(name); err != nil {
			return err
		}
	}
	if len(swaps) == 0 {
		return nil
	}
	sort.Slice(swaps, func(i, j int) bool { return swaps[i] < swaps[j] })
	for _, base := range swaps {
		next, err := l.checkSwap(base)
		if err != nil {
			return err
		}
		l.logger.Warn("log: finishing an interrupted compaction", "segment", segmentName(base, logSuffix), "next_offset", next)
		for old := range logs {
			if old != base && (old < base || old >= next) {
				continue
			}
			for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix, txnIndexSuffix} {
				if old == base && suffix == txnIndexSuffix {
					continue // already holds the entries of every replaced segment (mergeTxnIndexes)
				}
				if err := l.removeFile(segmentName(old, suffix)); err != nil {
					return err
				}
			}
			delete(logs, old)
		}
		swap := filepath.Join(l.dir, segmentName(base, logSuffix)+swapSuffix)
		if err := l.opts.FS.Rename(swap, filepath.Join(l.dir, segmentName(base, logSuffix))); err != nil {
			return fmt.Errorf("log: %s: finish compaction: %w", l, err)
		}
		logs[base] = true
	}
	return syncDir(l.opts.FS, l.dir)
}

// checkSwap verifies the batches of a swap file and returns the offset after
// its last one. Invalid data at its end, which an fsynced swap file should
// never hold, is cut off with a warning like any torn segment.
func (l *Log) checkSwap(base int64) (int64, error) {
	path := filepath.Join(l.dir, segmentName(base, logSuffix)+swapSuffix)
	f, err := l.opts.FS.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("log: %s: %w", l, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("log: %s: %w", l, err)
	}
	next := base
	end, err := walkBatches(f, 0, st.Size(), walkOptions{base: base, minNext: base, crc: true}, func(_ int64, h record.Header) error {
		next = h.NextOffset()
		return nil
	})
	if err != nil && !isDataError(err) {
		return 0, fmt.Errorf("log: %s: %s: %w", l, path, err)
	}
	if err != nil {
		l.logger.Warn("log: truncating invalid data in a compacted segment", "file", path, "position", end, "reason", err.Error())
		if err := f.Truncate(end); err != nil {
			return 0, fmt.Errorf("log: %s: %w", l, err)
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("log: %s: %w", l, err)
		}
	}
	return next, nil
}

func (l *Log) removeFile(name string) error {
	if err := l.opts.FS.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("log: %s: %w", l, err)
	}
	return nil
}
