package log

import (
	"math"
	"time"
)

// Kafka's per-topic flush policy: flush.messages fsyncs in the append path,
// flush.ms through FlushIfDue, which the broker's flush scheduler calls. Both
// reuse Sync, so concurrent callers share fsyncs and a failed fsync is sticky
// and takes the data dir offline. Unset (math.MaxInt64), they cost an append
// one comparison and no clock reading.

// noteAppendLocked records an append that moved the log end to leo and
// reports whether flush.messages now asks for an fsync: Kafka counts the
// offsets past the recovery point. The caller holds mu for writing.
func (l *Log) noteAppendLocked(leo int64) bool {
	if l.cfg.FlushMs != math.MaxInt64 && l.dirtySince.Load() == 0 {
		l.dirtySince.Store(max(l.opts.Now().UnixNano(), 1))
	}
	return leo-l.recoveryPoint >= l.cfg.FlushMessages
}

// flushedLocked updates the flush.ms bookkeeping after an fsync covered the
// log up to the recovery point; started is a clock reading taken before the
// fsync's target was fixed (0 when nothing was tracked). The caller holds mu
// for writing.
func (l *Log) flushedLocked(started int64) {
	switch {
	case l.dirtySince.Load() == 0:
	case l.active().next <= l.recoveryPoint:
		l.dirtySince.Store(0)
	case started != 0:
		// Appends after the target are not covered; they came after started.
		l.dirtySince.Store(started)
	}
}

// resetDirtyLocked restarts the flush.ms bookkeeping under a new config: a
// log with unflushed data gets the current time as its oldest unflushed
// append, so a newly set flush.ms applies within flush.ms of the change.
// The caller holds mu for writing.
func (l *Log) resetDirtyLocked() {
	if l.cfg.FlushMs == math.MaxInt64 {
		l.dirtySince.Store(0)
		return
	}
	if l.dirtySince.Load() == 0 && l.active().next > l.recoveryPoint {
		l.dirtySince.Store(max(l.opts.Now().UnixNano(), 1))
	}
}

// FlushIfDue fsyncs the log when its oldest unflushed append is at least
// flush.ms old at now, and reports whether it did.
func (l *Log) FlushIfDue(now time.Time) (bool, error) {
	since := l.dirtySince.Load()
	if since == 0 {
		return false, nil
	}
	l.mu.RLock()
	ms := l.cfg.FlushMs
	l.mu.RUnlock()
	if ms == math.MaxInt64 || (now.UnixNano()-since)/int64(time.Millisecond) < ms {
		return false, nil
	}
	return true, l.Sync()
}

// FlushRolled fsyncs the segments rolled since the last fsync and advances
// the recovery point to the active segment's base offset, as Kafka does after
// each roll (a "flush-log" task up to the new segment's base offset). Without
// it a log whose durability leaves fsyncs to the operating system keeps its
// recovery point where the broker last started, and a restart after a crash
// verifies every batch written since; with it, only the active segment and
// what rolled after the last call. The broker's flush scheduler calls it; it
// costs a log without rolled segments one read lock.
func (l *Log) FlushRolled() error {
	l.mu.RLock()
	owed := len(l.unflushed) > 0 || l.dirDirty
	l.mu.RUnlock()
	if !owed {
		return nil
	}
	return l.flush(false)
}
