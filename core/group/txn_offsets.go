package group

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/core/record"
)

// ErrProducerFenced is a TxnOffsetCommit from a producer epoch older than
// one the partition has seen (PRODUCER_FENCED).
var ErrProducerFenced = errors.New("group: producer fenced")

// Transactional offset commits (TxnOffsetCommit) are written to
// __consumer_offsets as transactional batches of the producer and become
// the group's committed offsets only when the transaction's COMMIT marker
// reaches the partition; an ABORT marker drops them. Until then they are
// pending, and OffsetFetch with require_stable reports their partitions as
// unstable.

// pendingTxn holds one producer's uncommitted offsets on a shard, by group.
type pendingTxn map[string]map[TopicPartition]Offset

// TxnCommitRequest is a TxnOffsetCommit.
type TxnCommitRequest struct {
	Group         string
	ProducerID    int64
	ProducerEpoch int16
	// MemberID, InstanceID and Generation identify the committing member
	// (TxnOffsetCommit v3+); a negative generation skips the check.
	MemberID   string
	InstanceID *string
	Generation int32
	Partitions []CommitPartition
}

// CommitTxnOffsets validates a TxnOffsetCommit and appends its offsets as a
// transactional batch of the producer; they stay pending until CompleteTxn.
// It returns one error (or nil) per partition, or an error for the request.
func (c *Coordinator) CommitTxnOffsets(req TxnCommitRequest) ([]error, error) {
	s, err := c.lockShard(req.Group)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if g := s.group(req.Group); g != nil && req.Generation >= 0 {
		switch {
		case g.streams != nil:
			err = g.streams.validateCommit(req.MemberID, req.Generation)
		case g.consumer != nil:
			err = s.validateConsumerCommit(g, req.MemberID, req.Generation)
		default:
			err = s.validateClassicCommit(g, CommitRequest{Group: req.Group, MemberID: req.MemberID,
				InstanceID: req.InstanceID, Generation: req.Generation})
		}
		if err != nil {
			return nil, err
		}
	}
	now := s.now()
	errs := make([]error, len(req.Partitions))
	var recs []record.Record
	offs := map[TopicPartition]Offset{}
	for i, p := range req.Partitions {
		if len(p.Metadata) > s.c.cfg.OffsetMetadataMaxBytes {
			errs[i] = fmt.Errorf("%w: %d bytes, at most %d", ErrOffsetMetadataTooLarge, len(p.Metadata), s.c.cfg.OffsetMetadataMaxBytes)
			continue
		}
		o := Offset{Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata, CommitTime: now.UnixMilli(), ExpireTime: -1}
		recs = append(recs, record.Record{Key: encodeOffsetKey(req.Group, p.TopicPartition), Value: encodeOffsetValue(o)})
		offs[p.TopicPartition] = o
	}
	if len(recs) == 0 {
		return errs, nil
	}
	b, err := record.Encode(record.BatchSpec{Transactional: true, FirstTimestamp: now.UnixMilli(),
		ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, BaseSequence: -1}, recs)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	if err := s.appendRaw(b); err != nil {
		return nil, err
	}
	if s.txnPending == nil {
		s.txnPending = map[int64]pendingTxn{}
	}
	pt := s.txnPending[req.ProducerID]
	if pt == nil {
		pt = pendingTxn{}
		s.txnPending[req.ProducerID] = pt
	}
	if pt[req.Group] == nil {
		pt[req.Group] = map[TopicPartition]Offset{}
	}
	for tp, o := range offs {
		pt[req.Group][tp] = o
	}
	return errs, nil
}

// CompleteTxn applies (commit) or drops (abort) a producer's pending offsets
// on a __consumer_offsets partition, once the transaction marker, at offset
// marker, has been appended to it and committed. Nothing happens when this
// broker does not coordinate the partition. A shard still loading keeps the
// completion and applies it once loaded when the marker lies past what the
// load replays: otherwise the offsets would stay pending, and a later abort
// of the producer would drop them although their transaction committed.
func (c *Coordinator) CompleteTxn(offsetsPartition int32, producerID int64, commit bool, marker int64) {
	c.mu.RLock()
	s := c.shards[offsetsPartition]
	c.mu.RUnlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resigned {
		return
	}
	if !s.loaded {
		s.lateMarkers = append(s.lateMarkers, lateMarker{producerID: producerID, commit: commit, offset: marker})
		return
	}
	s.completeTxnLocked(producerID, commit)
}

// lateMarker is a transaction marker committed while its shard was loading.
type lateMarker struct {
	producerID int64
	commit     bool
	offset     int64
}

// applyLateMarkersLocked applies the markers committed during the load that
// the load did not replay (at or past end). The caller holds mu.
func (s *shard) applyLateMarkersLocked(end int64) {
	for _, m := range s.lateMarkers {
		if m.offset >= end {
			s.completeTxnLocked(m.producerID, m.commit)
		}
	}
	s.lateMarkers = nil
}

// completeTxnLocked applies or drops a producer's pending offsets; the
// caller holds mu.
func (s *shard) completeTxnLocked(producerID int64, commit bool) {
	pt := s.txnPending[producerID]
	delete(s.txnPending, producerID)
	if !commit {
		return
	}
	for id, offs := range pt {
		g := s.group(id)
		if g == nil {
			g = s.newClassicGroup(id)
		}
		for tp, o := range offs {
			g.offsets[tp] = o
		}
	}
}

// UnstableOffsets lists the partitions of a group with transactional
// offsets not yet committed or aborted (UNSTABLE_OFFSET_COMMIT for
// OffsetFetch with require_stable).
func (c *Coordinator) UnstableOffsets(groupID string) map[TopicPartition]bool {
	s, err := c.lockShard(groupID)
	if err != nil {
		return nil
	}
	defer s.mu.Unlock()
	var out map[TopicPartition]bool
	for _, pt := range s.txnPending {
		for tp := range pt[groupID] {
			if out == nil {
				out = map[TopicPartition]bool{}
			}
			out[tp] = true
		}
	}
	return out
}

// appendRaw appends already encoded batches to the shard's partition.
func (s *shard) appendRaw(b []byte) error { return s.appendCommitted(b) }

// applyTxnBatch replays a transactional batch while loading: offsets are
// held per producer until its marker commits or aborts them.
func (ls *loadState) applyTxnBatch(h record.Header, batch []byte) error {
	if ls.pending == nil {
		ls.pending = map[int64]pendingTxn{}
	}
	if h.IsControl() {
		pt := ls.pending[h.ProducerID]
		delete(ls.pending, h.ProducerID)
		commit := false
		err := record.Records(batch, maxLoadRecordBytes, func(r record.Record) error {
			if len(r.Key) >= 4 {
				commit = int16(binary.BigEndian.Uint16(r.Key[2:])) == 1
			}
			return nil
		})
		if err != nil || !commit {
			return nil
		}
		for id, offs := range pt {
			ls.note(id)
			if ls.offsets[id] == nil {
				ls.offsets[id] = map[TopicPartition]Offset{}
			}
			for tp, o := range offs {
				ls.offsets[id][tp] = o
			}
		}
		return nil
	}
	return record.Records(batch, maxLoadRecordBytes, func(r record.Record) error {
		k, err := decodeKey(r.Key)
		if err != nil || k.kind != kindOffset || r.Value == nil {
			ls.corrupt += btoi(err != nil)
			return nil
		}
		o, err := decodeOffsetValue(r.Value)
		if err != nil {
			ls.corrupt++
			return nil
		}
		pt := ls.pending[h.ProducerID]
		if pt == nil {
			pt = pendingTxn{}
			ls.pending[h.ProducerID] = pt
		}
		if pt[k.group] == nil {
			pt[k.group] = map[TopicPartition]Offset{}
		}
		pt[k.group][k.tp] = o
		return nil
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
