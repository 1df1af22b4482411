package txn

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/gregorbroker/gregor/core/partition"
)

// complete sends the markers of a prepared transaction and writes its
// Complete state. Partitions whose marker is written are dropped from the
// in-memory state, so a retry sends only the missing ones. The caller holds
// the shard's lock.
func (s *shard) complete(m *txnMeta) error {
	commit := m.state == StatePrepareCommit
	marker := partition.TxnMarker{ProducerID: m.producerID, ProducerEpoch: m.epoch, Commit: commit, CoordinatorEpoch: s.epoch}
	tps := make([]TopicPartition, 0, len(m.partitions))
	for tp := range m.partitions {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	var failed error
	for _, tp := range tps {
		err := s.c.opts.WriteMarker(tp, marker)
		if err != nil && !errors.Is(err, ErrMarkerDropped) {
			if failed == nil {
				failed = fmt.Errorf("txn: marker for %s-%d: %w", tp.Topic, tp.Partition, err)
			}
			continue
		}
		delete(m.partitions, tp)
	}
	if failed != nil {
		return failed
	}
	n := m.clone()
	n.state = StateCompleteAbort
	if commit {
		n.state = StateCompleteCommit
	}
	if n.nextProducerID >= 0 {
		// KIP-890: the epoch was exhausted; the producer moves to a new id.
		n.prevProducerID, n.producerID, n.nextProducerID, n.epoch, n.lastEpoch = n.producerID, n.nextProducerID, -1, 0, -1
	}
	n.partitions = map[TopicPartition]bool{}
	n.updateMs = s.nowMs()
	if err := s.write(n); err != nil {
		return err
	}
	s.txns[n.id] = n
	return nil
}

// abortFenced aborts an open transaction on the coordinator's own account
// (a timeout, or a new producer instance): the epoch is bumped first, so the
// markers fence the producer that opened it. The caller holds the lock.
func (s *shard) abortFenced(m *txnMeta) error {
	n := m.clone()
	if n.epoch < math.MaxInt16 {
		n.lastEpoch = n.epoch
		n.epoch++
	}
	n.state, n.updateMs = StatePrepareAbort, s.nowMs()
	if err := s.write(n); err != nil {
		return err
	}
	s.txns[n.id] = n
	return s.complete(n)
}

// AbortTimedOut aborts every open transaction older than its timeout and
// retries the markers of transactions left prepared. The server calls it
// every AbortCheckInterval; tests call it after moving their clock.
func (c *Coordinator) AbortTimedOut() {
	for _, s := range c.allShards() {
		s.abortTimedOut()
	}
}

func (s *shard) abortTimedOut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resigned || !s.loaded {
		return
	}
	now := s.nowMs()
	for _, m := range s.txns {
		switch {
		case m.state == StateOngoing && m.startMs >= 0 && now-m.startMs >= int64(m.timeoutMs):
			s.c.log.Info("aborting a transaction past its timeout", "transactional_id", m.id,
				"producer_id", m.producerID, "epoch", m.epoch, "open_ms", now-m.startMs, "timeout_ms", m.timeoutMs)
			if err := s.abortFenced(m); err != nil {
				s.c.log.Warn("cannot abort a timed-out transaction yet", "transactional_id", m.id, "err", err)
			}
		case m.preparing():
			if err := s.complete(m); err != nil {
				s.c.log.Warn("cannot complete a transaction yet", "transactional_id", m.id, "err", err)
			}
		}
	}
}
