package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
)

// Config is what the coordinator enforces, from the broker's [transactions]
// settings.
type Config struct {
	// MaxTimeout bounds the transaction.timeout.ms a producer may ask for
	// (transaction.max.timeout.ms).
	MaxTimeout time.Duration
	// AbortCheckInterval is how often open transactions are checked for
	// their timeout (transaction.abort.timed.out.transaction.cleanup.interval.ms).
	AbortCheckInterval time.Duration
	// Sync makes every state write durable before it is acknowledged.
	Sync bool
	// IDExpiration is how long a transactional id with no open transaction
	// is kept after its last state change (transactional.id.expiration.ms).
	IDExpiration time.Duration
	// ExpireCheckInterval is how often idle transactional ids are looked for
	// (transaction.remove.expired.transaction.cleanup.interval.ms).
	ExpireCheckInterval time.Duration
}

// DefaultConfig has Kafka's defaults.
func DefaultConfig() Config {
	return Config{MaxTimeout: 15 * time.Minute, AbortCheckInterval: 10 * time.Second,
		IDExpiration: 7 * 24 * time.Hour, ExpireCheckInterval: time.Hour}
}

// MarkerWriter appends a transaction marker to a partition. It returns
// ErrMarkerDropped when the partition no longer exists (the marker is not
// needed) and any other error when it should be tried again later.
type MarkerWriter func(tp TopicPartition, m partition.TxnMarker) error

// ErrMarkerDropped tells the coordinator a marker's partition is gone.
var ErrMarkerDropped = errors.New("txn: marker partition gone")

// Options carries what the coordinator needs from its surroundings.
type Options struct {
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
	// AllocateProducerID hands out a producer id never used before.
	AllocateProducerID func() (int64, error)
	// WriteMarker sends markers to the partitions of completing
	// transactions.
	WriteMarker MarkerWriter
}

// Leader is a __transaction_state partition this broker leads.
type Leader struct {
	Partition *partition.Partition
	Epoch     int32
}

// Coordinator is the transaction coordinator of one broker; each led
// __transaction_state partition is a shard with its own lock.
type Coordinator struct {
	cfg  Config
	opts Options
	log  *slog.Logger

	mu            sync.RWMutex // guards numPartitions, shards, closed
	numPartitions int32
	shards        map[int32]*shard
	closed        bool
}

// New returns a coordinator leading no partition yet.
func New(cfg Config, opts Options) *Coordinator {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = DefaultConfig().MaxTimeout
	}
	if cfg.AbortCheckInterval <= 0 {
		cfg.AbortCheckInterval = DefaultConfig().AbortCheckInterval
	}
	if cfg.IDExpiration <= 0 {
		cfg.IDExpiration = DefaultConfig().IDExpiration
	}
	if cfg.ExpireCheckInterval <= 0 {
		cfg.ExpireCheckInterval = DefaultConfig().ExpireCheckInterval
	}
	return &Coordinator{cfg: cfg, opts: opts, log: opts.Logger.With("component", "txn"), shards: map[int32]*shard{}}
}

// shard coordinates the transactional ids of one __transaction_state
// partition.
type shard struct {
	c        *Coordinator
	index    int32
	p        *partition.Partition
	epoch    int32         // the partition's leader epoch: the coordinator epoch of markers
	loadedCh chan struct{} // closed when loading ends

	mu       sync.Mutex // guards everything below; held across state writes and markers
	loaded   bool
	resigned bool
	txns     map[string]*txnMeta
}

// Assign tells the coordinator how many partitions __transaction_state has
// and which it leads. Partitions no longer led are dropped; newly led ones
// are loaded in the background, finishing the transactions they find
// prepared.
func (c *Coordinator) Assign(numPartitions int32, led map[int32]Leader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.numPartitions = numPartitions
	for idx, s := range c.shards {
		l, ok := led[idx]
		if !ok || l.Partition != s.p || l.Epoch != s.epoch {
			s.resign()
			delete(c.shards, idx)
		}
	}
	for idx, l := range led {
		if _, ok := c.shards[idx]; ok || l.Partition == nil {
			continue
		}
		s := &shard{c: c, index: idx, p: l.Partition, epoch: l.Epoch, loadedCh: make(chan struct{}), txns: map[string]*txnMeta{}}
		c.shards[idx] = s
		go s.load()
	}
}

// NumPartitions is the partition count of __transaction_state last assigned.
func (c *Coordinator) NumPartitions() int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.numPartitions
}

// Close resigns every partition.
func (c *Coordinator) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for idx, s := range c.shards {
		s.resign()
		delete(c.shards, idx)
	}
}

// WaitLoaded blocks until every partition assigned so far is loaded.
func (c *Coordinator) WaitLoaded(ctx context.Context) error {
	for _, s := range c.allShards() {
		select {
		case <-s.loadedCh:
		case <-ctx.Done():
			return fmt.Errorf("txn: waiting for partition %d to load: %w", s.index, ctx.Err())
		}
	}
	return nil
}

// Run checks for timed-out transactions every AbortCheckInterval and for
// idle transactional ids every ExpireCheckInterval until ctx ends, then
// resigns every partition.
func (c *Coordinator) Run(ctx context.Context) error {
	defer c.Close()
	t := time.NewTicker(c.cfg.AbortCheckInterval)
	defer t.Stop()
	expire := time.NewTicker(c.cfg.ExpireCheckInterval)
	defer expire.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.AbortTimedOut()
		case <-expire.C:
			c.ExpireTransactionalIDs()
		}
	}
}

func (c *Coordinator) allShards() []*shard {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*shard, 0, len(c.shards))
	for _, s := range c.shards {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

// lockShard returns the shard of a transactional id locked, or why this
// broker cannot serve it.
func (c *Coordinator) lockShard(id string) (*shard, error) {
	c.mu.RLock()
	if c.numPartitions <= 0 {
		c.mu.RUnlock()
		return nil, ErrCoordinatorNotAvailable
	}
	s := c.shards[PartitionFor(id, c.numPartitions)]
	c.mu.RUnlock()
	if s == nil {
		return nil, ErrNotCoordinator
	}
	s.mu.Lock()
	switch {
	case s.resigned:
		s.mu.Unlock()
		return nil, ErrNotCoordinator
	case !s.loaded:
		s.mu.Unlock()
		return nil, ErrCoordinatorLoadInProgress
	}
	return s, nil
}

func (s *shard) resign() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resigned = true
	s.txns = map[string]*txnMeta{}
}

func (s *shard) nowMs() int64 { return s.c.opts.Now().UnixMilli() }

// write appends m's new state to the partition and waits until it is
// committed (replicate.go); the caller changes its in-memory state only
// after this succeeded. The caller holds mu.
func (s *shard) write(m *txnMeta) error {
	b, err := encodeBatch(s.nowMs(), encodeKey(m.id), encodeValue(m))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStorage, err)
	}
	return s.appendCommitted(b, time.Duration(m.timeoutMs)*time.Millisecond)
}

// maxLoadRecordBytes bounds a decompressed batch while loading.
const maxLoadRecordBytes = 256 << 20

// errLoadEnd stops a load at the committed end.
var errLoadEnd = errors.New("txn: end of committed records")

// load replays the partition up to what is committed, then completes the transactions found in a
// Prepare state: their markers may not all have been written.
func (s *shard) load() {
	defer close(s.loadedCh)
	start := time.Now()
	txns := map[string]*txnMeta{}
	corrupt := 0
	end, ok := loadEnd(s.p, s.epoch, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.resigned
	})
	if !ok {
		return
	}
	l := s.p.Log()
	err := l.Scan(l.LogStartOffset(), func(h record.Header, batch []byte) error {
		if h.BaseOffset >= end {
			return errLoadEnd
		}
		if h.IsControl() {
			return nil
		}
		return record.Records(batch, maxLoadRecordBytes, func(r record.Record) error {
			id, ok, err := decodeKey(r.Key)
			if err == nil && ok {
				if r.Value == nil {
					delete(txns, id)
					return nil
				}
				var m *txnMeta
				if m, err = decodeValue(id, r.Value); err == nil {
					txns[id] = m
				}
			}
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					return err
				}
				corrupt++
				s.c.log.Error("skipping a corrupt record while loading", "partition", s.index,
					"offset", h.BaseOffset+int64(r.OffsetDelta), "err", err)
			}
			return nil
		})
	})
	if err != nil && !errors.Is(err, errLoadEnd) {
		s.c.log.Error("cannot load transaction state", "partition", s.index, "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resigned {
		return
	}
	s.txns = txns
	s.loaded = true
	pending := 0
	for _, m := range txns {
		if m.state == StatePrepareCommit || m.state == StatePrepareAbort {
			pending++
			if err := s.complete(m); err != nil {
				s.c.log.Warn("cannot complete a recovered transaction yet", "transactional_id", m.id, "err", err)
			}
		}
	}
	s.c.log.Info("loaded transaction state", "partition", s.index, "transactional_ids", len(txns),
		"completed_prepared", pending, "corrupt_records", corrupt, "took", time.Since(start).Round(time.Millisecond))
}
