package txn

import (
	"fmt"
)

// ExpireTransactionalIDs forgets every transactional id with no open
// transaction whose state has not changed for Config.IDExpiration
// (transactional.id.expiration.ms): a tombstone is appended to
// __transaction_state, so the id stays forgotten after a reload and
// compaction drops its records. A producer that comes back later gets a
// new producer id. It returns how many ids were removed. The server calls
// it every ExpireCheckInterval; tests call it after moving their clock.
func (c *Coordinator) ExpireTransactionalIDs() int {
	n := 0
	for _, s := range c.allShards() {
		n += s.expire()
	}
	return n
}

func (s *shard) expire() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resigned || !s.loaded {
		return 0
	}
	now := s.nowMs()
	limit := s.c.cfg.IDExpiration.Milliseconds()
	removed := 0
	for id, m := range s.txns {
		if !m.completed() || now-m.updateMs < limit {
			continue
		}
		if err := s.writeTombstone(id); err != nil {
			s.c.log.Warn("cannot expire a transactional id yet", "transactional_id", id, "err", err)
			return removed // the log is failing; try again at the next check
		}
		delete(s.txns, id)
		removed++
		s.c.log.Info("expired a transactional id", "transactional_id", id, "producer_id", m.producerID,
			"idle_ms", now-m.updateMs)
	}
	return removed
}

// writeTombstone appends the null value that removes id from the log. The
// caller holds mu.
func (s *shard) writeTombstone(id string) error {
	b, err := encodeBatch(s.nowMs(), encodeKey(id), nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStorage, err)
	}
	return s.appendCommitted(b, minWriteTimeout)
}
