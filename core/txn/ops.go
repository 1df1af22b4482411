package txn

import (
	"fmt"
	"math"
	"time"
)

// txnMeta is the state of one transactional id. A change is made on a
// clone, written, and only then swapped in.
type txnMeta struct {
	id             string
	producerID     int64
	prevProducerID int64 // the id before an epoch exhaustion moved to a new one, or -1
	nextProducerID int64 // KIP-890: the id the completing transaction moves to, or -1
	epoch          int16
	lastEpoch      int16 // the epoch before the last bump, for retried requests; -1 when none
	timeoutMs      int32
	state          State
	partitions     map[TopicPartition]bool
	startMs        int64 // when the open transaction began, or -1
	updateMs       int64
	tv             int16 // the client's transaction version: 2 for KIP-890 clients
}

func (m *txnMeta) clone() *txnMeta {
	n := *m
	n.partitions = make(map[TopicPartition]bool, len(m.partitions))
	for tp := range m.partitions {
		n.partitions[tp] = true
	}
	return &n
}

func (m *txnMeta) completed() bool {
	return m.state == StateEmpty || m.state == StateCompleteCommit || m.state == StateCompleteAbort
}

func (m *txnMeta) preparing() bool {
	return m.state == StatePrepareCommit || m.state == StatePrepareAbort || m.state == StatePrepareEpochFence
}

// ProducerIDAndEpoch is what a producer is told to use.
type ProducerIDAndEpoch struct {
	ProducerID int64
	Epoch      int16
}

// InitRequest is an InitProducerId with a transactional id.
type InitRequest struct {
	TransactionalID string
	TimeoutMs       int32
	// ProducerID and ProducerEpoch are -1, or the producer's current ones
	// when it recovers from an error by bumping its epoch (KIP-360).
	ProducerID    int64
	ProducerEpoch int16
	// TransactionVersion is 2 for clients of KIP-890 part 2.
	TransactionVersion int16
}

// InitProducerID gives a transactional producer its id and a new epoch,
// fencing older instances: an open transaction of the id is aborted first.
func (c *Coordinator) InitProducerID(req InitRequest) (ProducerIDAndEpoch, error) {
	if req.TransactionalID == "" {
		return ProducerIDAndEpoch{}, fmt.Errorf("%w: empty transactional id", ErrInvalidRequest)
	}
	if req.TimeoutMs <= 0 || time.Duration(req.TimeoutMs)*time.Millisecond > c.cfg.MaxTimeout {
		return ProducerIDAndEpoch{}, fmt.Errorf("%w: %d ms, at most %d", ErrInvalidTimeout, req.TimeoutMs, c.cfg.MaxTimeout.Milliseconds())
	}
	s, err := c.lockShard(req.TransactionalID)
	if err != nil {
		return ProducerIDAndEpoch{}, err
	}
	defer s.mu.Unlock()
	m := s.txns[req.TransactionalID]
	if m == nil || m.state == StateDead {
		pid, err := c.opts.AllocateProducerID()
		if err != nil {
			return ProducerIDAndEpoch{}, fmt.Errorf("%w: %v", ErrCoordinatorNotAvailable, err)
		}
		n := &txnMeta{id: req.TransactionalID, producerID: pid, prevProducerID: -1, nextProducerID: -1,
			lastEpoch: -1, timeoutMs: req.TimeoutMs, state: StateEmpty, partitions: map[TopicPartition]bool{},
			startMs: -1, updateMs: s.nowMs(), tv: req.TransactionVersion}
		if err := s.write(n); err != nil {
			return ProducerIDAndEpoch{}, err
		}
		s.txns[n.id] = n
		return ProducerIDAndEpoch{n.producerID, n.epoch}, nil
	}
	if req.ProducerID >= 0 {
		switch {
		case req.ProducerID == m.producerID && req.ProducerEpoch == m.epoch:
		case req.ProducerID == m.producerID && m.preparing():
			// A version 2 client that never saw its EndTxn's bump: as
			// Kafka, it waits for the markers (CONCURRENT_TRANSACTIONS
			// below) rather than being fenced, and is bumped once they
			// are written.
		case m.completed() && (req.ProducerID == m.producerID && req.ProducerEpoch == m.lastEpoch ||
			req.ProducerID == m.prevProducerID && m.lastEpoch < 0):
			// The answer to this request was lost: the bump is done.
			return ProducerIDAndEpoch{m.producerID, m.epoch}, nil
		default:
			return ProducerIDAndEpoch{}, fmt.Errorf("%w: producer %d epoch %d, the id has producer %d epoch %d",
				ErrProducerFenced, req.ProducerID, req.ProducerEpoch, m.producerID, m.epoch)
		}
	}
	if m.preparing() {
		if err := s.complete(m); err != nil {
			return ProducerIDAndEpoch{}, fmt.Errorf("%w: %v", ErrConcurrentTransactions, err)
		}
	} else if m.state == StateOngoing {
		if err := s.abortFenced(m); err != nil {
			return ProducerIDAndEpoch{}, fmt.Errorf("%w: %v", ErrConcurrentTransactions, err)
		}
	}
	m = s.txns[req.TransactionalID]
	if !m.completed() {
		return ProducerIDAndEpoch{}, ErrConcurrentTransactions
	}
	n := m.clone()
	if err := s.bump(n); err != nil {
		return ProducerIDAndEpoch{}, err
	}
	n.timeoutMs, n.state, n.startMs, n.updateMs = req.TimeoutMs, StateEmpty, -1, s.nowMs()
	n.partitions = map[TopicPartition]bool{}
	n.tv = req.TransactionVersion
	if err := s.write(n); err != nil {
		return ProducerIDAndEpoch{}, err
	}
	s.txns[n.id] = n
	return ProducerIDAndEpoch{n.producerID, n.epoch}, nil
}

// bump moves n to its next epoch, or to a new producer id at epoch 0 when
// the epoch is exhausted.
func (s *shard) bump(n *txnMeta) error {
	if n.epoch >= math.MaxInt16-1 {
		pid, err := s.c.opts.AllocateProducerID()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCoordinatorNotAvailable, err)
		}
		n.prevProducerID, n.producerID, n.epoch, n.lastEpoch = n.producerID, pid, 0, -1
		return nil
	}
	n.lastEpoch = n.epoch
	n.epoch++
	return nil
}

// AddPartitionsRequest adds partitions to a producer's transaction.
type AddPartitionsRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partitions      []TopicPartition
	// TransactionVersion is 2 when the partitions join implicitly
	// (Produce v12+, TxnOffsetCommit v5+): the transaction is a KIP-890
	// part 2 one.
	TransactionVersion int16
}

// checkProducer validates the producer of a request against the id's
// state; the caller holds the shard's lock.
func checkProducer(m *txnMeta, producerID int64, epoch int16) error {
	switch {
	case m == nil:
		return fmt.Errorf("%w: unknown transactional id", ErrInvalidProducerIDMapping)
	case m.producerID != producerID:
		return fmt.Errorf("%w: producer %d, the id has %d", ErrInvalidProducerIDMapping, producerID, m.producerID)
	case m.epoch != epoch:
		return fmt.Errorf("%w: epoch %d, the id is at %d", ErrProducerFenced, epoch, m.epoch)
	}
	return nil
}

// AddPartitions adds partitions to the producer's transaction, opening it
// if none is open (AddPartitionsToTxn, AddOffsetsToTxn and the implicit
// registration of KIP-890 part 2).
func (c *Coordinator) AddPartitions(req AddPartitionsRequest) error {
	s, err := c.lockShard(req.TransactionalID)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	m := s.txns[req.TransactionalID]
	if err := checkProducer(m, req.ProducerID, req.ProducerEpoch); err != nil {
		return err
	}
	if m.preparing() {
		// A retry of the markers may finish it now.
		if err := s.complete(m); err != nil {
			return fmt.Errorf("%w: %v", ErrConcurrentTransactions, err)
		}
		m = s.txns[req.TransactionalID]
	}
	if m.state == StateOngoing {
		missing := false
		for _, tp := range req.Partitions {
			if !m.partitions[tp] {
				missing = true
				break
			}
		}
		if !missing {
			return nil
		}
	}
	n := m.clone()
	for _, tp := range req.Partitions {
		n.partitions[tp] = true
	}
	if req.TransactionVersion >= 2 {
		n.tv = 2
	}
	if n.state != StateOngoing {
		n.state, n.startMs = StateOngoing, s.nowMs()
	}
	n.updateMs = s.nowMs()
	if err := s.write(n); err != nil {
		return err
	}
	s.txns[n.id] = n
	return nil
}

// Verify checks, for a broker about to append a producer's first
// transactional batch to partitions (KIP-890 part 1), that each partition is
// in the producer's open transaction. It returns one error (or nil) per
// partition, or an error for all.
func (c *Coordinator) Verify(req AddPartitionsRequest) ([]error, error) {
	s, err := c.lockShard(req.TransactionalID)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	m := s.txns[req.TransactionalID]
	if err := checkProducer(m, req.ProducerID, req.ProducerEpoch); err != nil {
		return nil, err
	}
	errs := make([]error, len(req.Partitions))
	for i, tp := range req.Partitions {
		if m.state != StateOngoing || !m.partitions[tp] {
			errs[i] = fmt.Errorf("%w: %s-%d", ErrNotInTransaction, tp.Topic, tp.Partition)
		}
	}
	return errs, nil
}

// EndRequest is an EndTxn.
type EndRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Commit          bool
	// BumpEpoch is KIP-890 part 2 (EndTxn v5+): every end moves the
	// producer to a new epoch, returned to it.
	BumpEpoch bool
}

// EndTxn commits or aborts the producer's transaction: the Prepare state is
// written, the markers sent, then the Complete state written. When a marker
// cannot be written yet the answer is still success, since the outcome is
// decided; the markers are retried by later requests and AbortTimedOut.
func (c *Coordinator) EndTxn(req EndRequest) (ProducerIDAndEpoch, error) {
	s, err := c.lockShard(req.TransactionalID)
	if err != nil {
		return ProducerIDAndEpoch{}, err
	}
	defer s.mu.Unlock()
	m := s.txns[req.TransactionalID]
	if m == nil {
		return ProducerIDAndEpoch{}, fmt.Errorf("%w: unknown transactional id", ErrInvalidProducerIDMapping)
	}
	want := StateCompleteAbort
	if req.Commit {
		want = StateCompleteCommit
	}
	current := ProducerIDAndEpoch{m.producerID, m.epoch}
	if req.BumpEpoch && m.completed() && m.state != StateEmpty {
		// A retry whose answer was lost: the epoch was already bumped. As
		// in Kafka, every end of a version 2 transaction bumps the epoch,
		// so the one before it is inferred when it is not remembered (the
		// state was reloaded meanwhile).
		retried := req.ProducerID == m.producerID &&
			(req.ProducerEpoch == m.lastEpoch || m.tv >= 2 && m.epoch > 0 && req.ProducerEpoch == m.epoch-1) ||
			req.ProducerID == m.prevProducerID && m.lastEpoch < 0
		if retried {
			if m.state != want {
				return ProducerIDAndEpoch{}, fmt.Errorf("%w: the transaction already ended as %s", ErrInvalidTxnState, m.state)
			}
			return current, nil
		}
	}
	if req.BumpEpoch && (m.state == StatePrepareCommit || m.state == StatePrepareAbort) && req.ProducerID == m.producerID &&
		(req.ProducerEpoch == m.lastEpoch || m.tv >= 2 && m.epoch > 0 && req.ProducerEpoch == m.epoch-1) {
		// A retry of the EndTxn that prepared the transaction (its answer
		// was lost, or the client timed out while the markers are still
		// being written): as Kafka, the client waits for the markers with
		// CONCURRENT_TRANSACTIONS, or learns that the other outcome was
		// decided; it is not fenced, which would make it report an outcome
		// the coordinator is not carrying out.
		if (m.state == StatePrepareCommit) != req.Commit {
			return ProducerIDAndEpoch{}, fmt.Errorf("%w: the transaction is in %s", ErrInvalidTxnState, m.state)
		}
		if err := s.complete(m); err != nil {
			return ProducerIDAndEpoch{}, fmt.Errorf("%w: the transaction is in %s: %v", ErrConcurrentTransactions, m.state, err)
		}
		m = s.txns[req.TransactionalID]
		return ProducerIDAndEpoch{m.producerID, m.epoch}, nil
	}
	if err := checkProducer(m, req.ProducerID, req.ProducerEpoch); err != nil {
		return ProducerIDAndEpoch{}, err
	}
	if m.preparing() {
		// The previous transaction's markers are still being written:
		// retry them now, and answer CONCURRENT_TRANSACTIONS until they are.
		if err := s.complete(m); err != nil {
			return ProducerIDAndEpoch{}, fmt.Errorf("%w: the previous transaction is in %s: %v", ErrConcurrentTransactions, m.state, err)
		}
		m = s.txns[req.TransactionalID]
		current = ProducerIDAndEpoch{m.producerID, m.epoch}
	}
	switch {
	case m.state == StateOngoing:
	case req.BumpEpoch && !req.Commit:
		// KIP-890 part 2: aborting with nothing open still bumps the epoch.
		n := m.clone()
		if err := s.bump(n); err != nil {
			return ProducerIDAndEpoch{}, err
		}
		n.state, n.updateMs, n.tv = StateCompleteAbort, s.nowMs(), 2
		if err := s.write(n); err != nil {
			return ProducerIDAndEpoch{}, err
		}
		s.txns[n.id] = n
		return ProducerIDAndEpoch{n.producerID, n.epoch}, nil
	case m.state == want && !req.BumpEpoch:
		return current, nil // a retried EndTxn
	default:
		return ProducerIDAndEpoch{}, fmt.Errorf("%w: cannot %s in state %s", ErrInvalidTxnState,
			map[bool]string{true: "commit", false: "abort"}[req.Commit], m.state)
	}
	n := m.clone()
	n.state = StatePrepareAbort
	if req.Commit {
		n.state = StatePrepareCommit
	}
	if req.BumpEpoch {
		if n.epoch >= math.MaxInt16-1 {
			pid, err := c.opts.AllocateProducerID()
			if err != nil {
				return ProducerIDAndEpoch{}, fmt.Errorf("%w: %v", ErrCoordinatorNotAvailable, err)
			}
			n.nextProducerID = pid
		}
		n.lastEpoch = n.epoch
		n.epoch++
		n.tv = 2
	}
	n.updateMs = s.nowMs()
	if err := s.write(n); err != nil {
		return ProducerIDAndEpoch{}, err
	}
	s.txns[n.id] = n
	if err := s.complete(n); err != nil {
		c.log.Warn("transaction markers not all written; will retry", "transactional_id", n.id, "err", err)
	}
	m = s.txns[n.id]
	return ProducerIDAndEpoch{m.producerID, m.epoch}, nil
}
