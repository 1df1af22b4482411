package log

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// Index files hold fixed-size big-endian entries, exactly as Kafka writes them:
//
//	.index      relative offset (4 bytes) + position in the .log file (4 bytes)
//	.timeindex  timestamp (8 bytes) + relative offset (4 bytes)
//
// An offset index entry names a batch's last offset and the position where that
// batch starts. A time index entry names the largest timestamp seen so far in
// the segment and the last offset of the batch that carried it.
const (
	offsetEntrySize = 8
	timeEntrySize   = 12
)

func offsetEntries(idx []byte) int { return len(idx) / offsetEntrySize }
func timeEntries(idx []byte) int   { return len(idx) / timeEntrySize }

// offsetEntry returns entry i of an offset index as (absolute offset, position).
func offsetEntry(idx []byte, base int64, i int) (int64, int64) {
	e := idx[i*offsetEntrySize:]
	return base + int64(int32(binary.BigEndian.Uint32(e))), int64(int32(binary.BigEndian.Uint32(e[4:])))
}

// timeEntry returns entry i of a time index as (timestamp, absolute offset).
func timeEntry(idx []byte, base int64, i int) (int64, int64) {
	e := idx[i*timeEntrySize:]
	return int64(binary.BigEndian.Uint64(e)), base + int64(int32(binary.BigEndian.Uint32(e[8:])))
}

func appendOffsetEntry(idx []byte, base, offset, pos int64) []byte {
	idx = binary.BigEndian.AppendUint32(idx, uint32(offset-base))
	return binary.BigEndian.AppendUint32(idx, uint32(pos))
}

func appendTimeEntry(idx []byte, base, ts, offset int64) []byte {
	idx = binary.BigEndian.AppendUint64(idx, uint64(ts))
	return binary.BigEndian.AppendUint32(idx, uint32(offset-base))
}

// lookupOffset returns the entry with the largest offset <= target, or (base,
// 0) when there is none: the position from which to scan for target.
func lookupOffset(idx []byte, base, target int64) (int64, int64) {
	n := offsetEntries(idx)
	i := sort.Search(n, func(i int) bool {
		off, _ := offsetEntry(idx, base, i)
		return off > target
	})
	if i == 0 {
		return base, 0
	}
	return offsetEntry(idx, base, i-1)
}

// lookupTime returns the entry with the largest timestamp <= ts, or (-1, base)
// when there is none.
func lookupTime(idx []byte, base, ts int64) (int64, int64) {
	n := timeEntries(idx)
	i := sort.Search(n, func(i int) bool {
		t, _ := timeEntry(idx, base, i)
		return t > ts
	})
	if i == 0 {
		return -1, base
	}
	return timeEntry(idx, base, i-1)
}

// lastTime returns the last time index entry, or (-1, base) when empty.
func lastTime(idx []byte, base int64) (int64, int64) {
	if n := timeEntries(idx); n > 0 {
		return timeEntry(idx, base, n-1)
	}
	return -1, base
}

// checkOffsetIndex verifies every entry of an offset index: whole entries,
// offsets strictly increasing within [base, next), positions strictly
// increasing and inside a log of logSize bytes.
func checkOffsetIndex(idx []byte, base, next, logSize int64) error {
	if len(idx)%offsetEntrySize != 0 {
		return fmt.Errorf("%w: offset index size %d is not a multiple of %d", ErrCorruptIndex, len(idx), offsetEntrySize)
	}
	prevOff, prevPos := int64(math.MinInt64), int64(-1)
	for i := range offsetEntries(idx) {
		off, pos := offsetEntry(idx, base, i)
		switch {
		case off < base || off >= next:
			return fmt.Errorf("%w: offset index entry %d: offset %d outside [%d, %d)", ErrCorruptIndex, i, off, base, next)
		case pos < 0 || pos >= logSize:
			return fmt.Errorf("%w: offset index entry %d: position %d outside a %d-byte log", ErrCorruptIndex, i, pos, logSize)
		case off <= prevOff || pos <= prevPos:
			return fmt.Errorf("%w: offset index entry %d (%d at %d) does not follow (%d at %d)", ErrCorruptIndex, i, off, pos, prevOff, prevPos)
		}
		prevOff, prevPos = off, pos
	}
	return nil
}

// checkTimeIndex verifies every entry of a time index: whole entries,
// timestamps and offsets non-decreasing, offsets within [base, next).
func checkTimeIndex(idx []byte, base, next int64) error {
	if len(idx)%timeEntrySize != 0 {
		return fmt.Errorf("%w: time index size %d is not a multiple of %d", ErrCorruptIndex, len(idx), timeEntrySize)
	}
	prevTS, prevOff := int64(math.MinInt64), int64(math.MinInt64)
	for i := range timeEntries(idx) {
		ts, off := timeEntry(idx, base, i)
		switch {
		case off < base || off >= next:
			return fmt.Errorf("%w: time index entry %d: offset %d outside [%d, %d)", ErrCorruptIndex, i, off, base, next)
		case ts < prevTS || off < prevOff:
			return fmt.Errorf("%w: time index entry %d (%d at %d) does not follow (%d at %d)", ErrCorruptIndex, i, ts, off, prevTS, prevOff)
		}
		prevTS, prevOff = ts, off
	}
	return nil
}
