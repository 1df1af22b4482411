package mirror

import "sort"

// maxRuns bounds the translation history kept per partition. Offsets older
// than the oldest run are not translated (no checkpoint is written for them),
// which can only delay a group's sync, never skip a record.
const maxRuns = 4096

// run is a stretch of mirrored records whose source offsets are contiguous
// and whose target offsets are contiguous: source up+i was written at target
// down+i for i < length.
type run struct {
	up, down, length int64
}

// offsetMap translates source offsets of one partition into target offsets.
// In copy mode the mirror is the only writer of the target partition, so
// target offsets of its records are contiguous; source offsets are contiguous
// except where the source skips offsets (transaction markers, aborted or
// compacted records). A new run starts at every such gap, and an offset sync
// is written for it, so translation is exact, never approximate.
//
// It is not safe for concurrent use; partitionState guards it.
type offsetMap struct {
	runs []run
	// srcNext is the next source offset to mirror: every source record
	// below it is on the target. tgtNext is the target offset after the last
	// mirrored record.
	srcNext, tgtNext int64
}

// reset forgets everything and places the map at a starting point: the
// source offset from which mirroring starts and the target's end offset.
func (m *offsetMap) reset(srcNext, tgtNext int64) {
	m.runs = m.runs[:0]
	m.srcNext, m.tgtNext = srcNext, tgtNext
}

// add records that source offset up was written at target offset down. It
// reports whether a new run started, which needs an offset sync.
func (m *offsetMap) add(up, down int64) bool {
	if n := len(m.runs); n > 0 {
		last := &m.runs[n-1]
		if up == last.up+last.length && down == last.down+last.length {
			last.length++
			m.srcNext, m.tgtNext = up+1, down+1
			return false
		}
	}
	if len(m.runs) == maxRuns {
		copy(m.runs, m.runs[1:])
		m.runs = m.runs[:maxRuns-1]
	}
	m.runs = append(m.runs, run{up: up, down: down, length: 1})
	m.srcNext, m.tgtNext = up+1, down+1
	return true
}

// loadSync takes a persisted offset sync back into the history. Syncs come
// in the order they were written; a sync with the same delta as the run
// before it lies inside that run (a periodic position sync), because a new
// delta is always synced at its first record.
func (m *offsetMap) loadSync(up, down int64) {
	if n := len(m.runs); n > 0 {
		last := &m.runs[n-1]
		if up-last.up == down-last.down && up >= last.up {
			if l := up - last.up + 1; l > last.length {
				last.length = l
			}
			m.srcNext, m.tgtNext = up+1, down+1
			return
		}
		// The previous run ends where this one's target offsets start.
		if down > last.down {
			last.length = down - last.down
		}
	}
	m.add(up, down)
}

// skipTo moves the source position past offsets that hold no records to
// mirror (control batches, aborted transactions); nothing is written.
func (m *offsetMap) skipTo(srcNext int64) {
	if srcNext > m.srcNext {
		m.srcNext = srcNext
	}
}

// translate maps a committed source offset (the next record a group will
// read) to the target offset from which a consumer reads exactly the records
// the group has not read. ok is false when the offset is not mirrored yet or
// is older than the history.
func (m *offsetMap) translate(committed int64) (int64, bool) {
	if committed > m.srcNext || len(m.runs) == 0 {
		return 0, false
	}
	i := sort.Search(len(m.runs), func(i int) bool { return m.runs[i].up > committed }) - 1
	if i < 0 {
		return 0, false
	}
	r := m.runs[i]
	length := r.length
	if i == len(m.runs)-1 {
		length = m.tgtNext - r.down
	}
	return r.down + min(committed-r.up, length), true
}
