package txn

import (
	"regexp"
	"sort"
)

// Description is a transactional id's state (DescribeTransactions,
// ListTransactions).
type Description struct {
	TransactionalID string
	State           State
	ProducerID      int64
	ProducerEpoch   int16
	TimeoutMs       int32
	// StartMs is when the open transaction began, or -1.
	StartMs    int64
	Partitions []TopicPartition
}

func (m *txnMeta) describe() Description {
	d := Description{TransactionalID: m.id, State: m.state, ProducerID: m.producerID, ProducerEpoch: m.epoch,
		TimeoutMs: m.timeoutMs, StartMs: m.startMs}
	if m.state != StateOngoing && !m.preparing() {
		d.StartMs = -1
	}
	for tp := range m.partitions {
		d.Partitions = append(d.Partitions, tp)
	}
	sort.Slice(d.Partitions, func(i, j int) bool {
		a, b := d.Partitions[i], d.Partitions[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return d
}

// Describe returns a transactional id's state.
func (c *Coordinator) Describe(id string) (Description, error) {
	s, err := c.lockShard(id)
	if err != nil {
		return Description{}, err
	}
	defer s.mu.Unlock()
	m := s.txns[id]
	if m == nil || m.state == StateDead {
		return Description{}, ErrTransactionalIDNotFound
	}
	return m.describe(), nil
}

// ListFilter narrows ListTransactions; empty filters match everything.
type ListFilter struct {
	States      []State
	ProducerIDs []int64
	// MinDurationMs keeps transactions open at least that long; -1 keeps all.
	MinDurationMs int64
	// IDPattern keeps the transactional ids it matches; nil keeps all.
	IDPattern *regexp.Regexp
}

// List returns the transactional ids of every loaded partition that match
// f, sorted by id. Partitions still loading are skipped; loading reports
// how many there were.
func (c *Coordinator) List(f ListFilter) (out []Description, loading int) {
	for _, s := range c.allShards() {
		s.mu.Lock()
		if s.resigned || !s.loaded {
			loading++
			s.mu.Unlock()
			continue
		}
		now := s.nowMs()
		for _, m := range s.txns {
			if m.state == StateDead || !matches(f, m, now) {
				continue
			}
			out = append(out, m.describe())
		}
		s.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TransactionalID < out[j].TransactionalID })
	return out, loading
}

func matches(f ListFilter, m *txnMeta, nowMs int64) bool {
	if f.IDPattern != nil && !f.IDPattern.MatchString(m.id) {
		return false
	}
	if len(f.States) > 0 {
		ok := false
		for _, st := range f.States {
			ok = ok || st == m.state
		}
		if !ok {
			return false
		}
	}
	if len(f.ProducerIDs) > 0 {
		ok := false
		for _, id := range f.ProducerIDs {
			ok = ok || id == m.producerID
		}
		if !ok {
			return false
		}
	}
	if f.MinDurationMs >= 0 {
		if m.state != StateOngoing || m.startMs < 0 || nowMs-m.startMs < f.MinDurationMs {
			return false
		}
	}
	return true
}
