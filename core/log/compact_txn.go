package log

import (
	"encoding/binary"
	"errors"
	"sort"

	"github.com/gregorbroker/gregor/core/record"
)

// Control record types (the second int16 of a control record's key).
const (
	controlAbort  = 0
	controlCommit = 1
)

// txnTracker follows transactions through one cleaning, batch by batch in
// offset order from the start of the log, as Kafka's
// CleanedTransactionMetadata does: it tells aborted transactional batches
// from committed ones and decides when a transaction marker may go, which
// is once no batch of its transaction is left below it.
type txnTracker struct {
	aborted []AbortedTxn // every aborted transaction, by first offset
	next    int          // aborted[next:] have not started yet
	// ongoingAborted are the aborted transactions begun and not yet ended
	// by their marker, by producer; seen says a batch of it was read.
	ongoingAborted map[int64]*abortedRun
	// ongoingCommitted are the producers whose current transaction had a
	// batch read and is not an aborted one.
	ongoingCommitted map[int64]bool
	// dropped are the abort markers removed, whose index entries go too.
	dropped map[AbortedTxn]bool
}

type abortedRun struct {
	txn  AbortedTxn
	seen bool
}

func newTxnTracker(byProducer map[int64][]AbortedTxn) *txnTracker {
	t := &txnTracker{ongoingAborted: map[int64]*abortedRun{}, ongoingCommitted: map[int64]bool{}, dropped: map[AbortedTxn]bool{}}
	for _, ts := range byProducer {
		t.aborted = append(t.aborted, ts...)
	}
	sort.Slice(t.aborted, func(i, j int) bool { return t.aborted[i].FirstOffset < t.aborted[j].FirstOffset })
	return t
}

// startUpTo opens the aborted transactions that begin at or below offset.
func (t *txnTracker) startUpTo(offset int64) {
	for t.next < len(t.aborted) && t.aborted[t.next].FirstOffset <= offset {
		a := t.aborted[t.next]
		t.ongoingAborted[a.ProducerID] = &abortedRun{txn: a}
		t.next++
	}
}

// onData records a data batch and reports whether it is aborted.
func (t *txnTracker) onData(h record.Header) bool {
	t.startUpTo(h.LastOffset())
	if !h.IsTransactional() {
		return false
	}
	if a := t.ongoingAborted[h.ProducerID]; a != nil {
		a.seen = true
		return true
	}
	t.ongoingCommitted[h.ProducerID] = true
	return false
}

// onMarker records a control batch and reports whether no batch of the
// transaction it ends is left, so that the marker may go once its delete
// horizon has passed. A marker already emptied by an earlier cleaning may
// go too.
func (t *txnTracker) onMarker(h record.Header, b []byte) (discardable bool) {
	t.startUpTo(h.LastOffset())
	typ, ok := controlType(b)
	if !ok {
		return true
	}
	switch typ {
	case controlAbort:
		a := t.ongoingAborted[h.ProducerID]
		delete(t.ongoingAborted, h.ProducerID)
		return a == nil || !a.seen
	case controlCommit:
		seen := t.ongoingCommitted[h.ProducerID]
		delete(t.ongoingCommitted, h.ProducerID)
		return !seen
	}
	return false
}

// dropMarker records that the abort marker at h was removed, so that its
// aborted-transaction index entry is removed with it.
func (t *txnTracker) dropMarker(h record.Header) {
	for _, a := range t.aborted {
		if a.ProducerID == h.ProducerID && a.LastOffset == h.BaseOffset {
			t.dropped[a] = true
		}
	}
}

// controlType reads the type of a control batch's record; ok is false for a
// batch without one (emptied by an earlier cleaning).
func controlType(b []byte) (typ int16, ok bool) {
	err := record.Records(b, maxRecordsBytes, func(r record.Record) error {
		if len(r.Key) >= 4 {
			typ, ok = int16(binary.BigEndian.Uint16(r.Key[2:])), true
		}
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return 0, false
	}
	return typ, ok
}

// isAborted reports whether a transactional batch belongs to one of its
// producer's aborted transactions: those span the producer's batches from
// the transaction's first offset to its abort marker.
func isAborted(aborted map[int64][]AbortedTxn, h record.Header) bool {
	for _, t := range aborted[h.ProducerID] {
		if h.BaseOffset >= t.FirstOffset && h.BaseOffset < t.LastOffset {
			return true
		}
	}
	return false
}

// filterMarker appends to dst what replaces the control batch b (Kafka's
// checkBatchRetention for control batches): the marker whole while data of
// its transaction is left; once none is, the marker gets a delete horizon of
// now + delete.retention.ms, and it is removed at a cleaning after that
// horizon. The last batch of its producer keeps its header.
func (f *filter) filterMarker(dst []byte, h record.Header, b []byte, res *CleanResult) ([]byte, bool, error) {
	res.RecordsRead += int64(h.NumRecords)
	if !f.txns.onMarker(h, b) {
		res.RecordsKept += int64(h.NumRecords)
		return append(dst, b...), false, nil
	}
	if hasDeleteHorizon(h) && f.now >= h.FirstTimestamp || h.NumRecords == 0 {
		f.txns.dropMarker(h)
		if h.ProducerID >= 0 && f.producers[h.ProducerID] == h.LastOffset() {
			out, err := encodeRetained(dst, h, nil, -1)
			return out, true, err
		}
		return dst, true, nil
	}
	res.RecordsKept += int64(h.NumRecords)
	horizon := h.FirstTimestamp
	if !hasDeleteHorizon(h) {
		horizon = f.now + f.retention
		if f.retention > maxInt64-f.now {
			horizon = maxInt64
		}
	}
	if f.horizon < 0 || horizon < f.horizon {
		f.horizon = horizon
	}
	if hasDeleteHorizon(h) {
		return append(dst, b...), false, nil
	}
	f.kept.reset()
	err := record.Records(b, maxRecordsBytes, func(r record.Record) error {
		f.kept.add(h, r)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	out, err := encodeRetained(dst, h, f.kept.recs, horizon)
	return out, true, err
}

const maxInt64 = 1<<63 - 1
