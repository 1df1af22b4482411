package log

import (
	"fmt"
	"strconv"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// epochEntry says that leader epoch epoch began at offset start.
type epochEntry struct {
	epoch int32
	start int64
}

// epochCache is a partition's leader epoch history, kept in its
// leader-epoch-checkpoint file with Kafka's LeaderEpochFileCache semantics.
// Guarded by the owning Log's mu.
type epochCache struct {
	fs      vfs.FS
	path    string
	entries []epochEntry // ascending epoch and start offset
}

// loadEpochCache reads a leader-epoch-checkpoint file; a missing file yields
// an empty cache.
func loadEpochCache(fsys vfs.FS, path string) (*epochCache, error) {
	c := &epochCache{fs: fsys, path: path}
	lines, err := readCheckpoint(fsys, path, 2)
	if err != nil {
		return c, err
	}
	for _, l := range lines {
		e, err1 := strconv.ParseInt(l[0], 10, 32)
		s, err2 := strconv.ParseInt(l[1], 10, 64)
		if err1 != nil || err2 != nil || e < 0 || s < 0 {
			return &epochCache{fs: fsys, path: path}, fmt.Errorf("%w: checkpoint %s: malformed entry %q %q", ErrCorrupt, path, l[0], l[1])
		}
		if n := len(c.entries); n > 0 && (int32(e) <= c.entries[n-1].epoch || s < c.entries[n-1].start) {
			return &epochCache{fs: fsys, path: path}, fmt.Errorf("%w: checkpoint %s: entry %d %d is out of order", ErrCorrupt, path, e, s)
		}
		c.entries = append(c.entries, epochEntry{int32(e), s})
	}
	return c, nil
}

func (c *epochCache) write() error {
	lines := make([]string, len(c.entries))
	for i, e := range c.entries {
		lines[i] = fmt.Sprintf("%d %d", e.epoch, e.start)
	}
	return writeCheckpoint(c.fs, c.path, lines)
}

func (c *epochCache) latest() (epochEntry, bool) {
	if len(c.entries) == 0 {
		return epochEntry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// assign records that epoch starts at start and reports whether the cache
// changed. Entries that would break monotonicity (an epoch or start offset at
// or past the new one) are dropped first, as Kafka does.
func (c *epochCache) assign(epoch int32, start int64) bool {
	if epoch < 0 || start < 0 {
		return false
	}
	if last, ok := c.latest(); ok && last.epoch == epoch && start >= last.start {
		return false
	}
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].epoch >= epoch || c.entries[n-1].start >= start) {
		n--
	}
	c.entries = append(c.entries[:n], epochEntry{epoch, start})
	return true
}

// truncateFromEnd drops entries starting at or after end.
func (c *epochCache) truncateFromEnd(end int64) bool {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].start >= end {
		n--
	}
	changed := n != len(c.entries)
	c.entries = c.entries[:n]
	return changed
}

// truncateFromStart drops entries wholly before start, keeping the epoch in
// force at start with its start offset raised to start.
func (c *epochCache) truncateFromStart(start int64) bool {
	i := 0
	for i < len(c.entries) && c.entries[i].start <= start {
		i++
	}
	if i == 0 {
		return false
	}
	kept := c.entries[i-1]
	if i == 1 && kept.start == start {
		return false
	}
	kept.start = start
	c.entries = append([]epochEntry{kept}, c.entries[i:]...)
	return true
}

// endOffsetFor answers OffsetsForLeaderEpoch: the largest epoch <= the one
// requested and the offset where the next epoch starts (the log end offset for
// the latest epoch); (-1, -1) when unknown.
func (c *epochCache) endOffsetFor(epoch int32, leo int64) (int32, int64) {
	if epoch < 0 {
		return -1, -1
	}
	last, ok := c.latest()
	if ok && last.epoch == epoch {
		return epoch, leo
	}
	// The first entry with a larger epoch.
	hi := 0
	for hi < len(c.entries) && c.entries[hi].epoch <= epoch {
		hi++
	}
	if hi == len(c.entries) {
		return -1, -1
	}
	if hi == 0 {
		return epoch, c.entries[0].start
	}
	return c.entries[hi-1].epoch, c.entries[hi].start
}
