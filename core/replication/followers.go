package replication

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gregorbroker/gregor/core/partition"
)

// Follow is one partition this broker follows: its local replica and its
// leader as the metadata names it.
type Follow struct {
	Partition   *partition.Partition
	Leader      int32
	LeaderAddr  string
	LeaderEpoch int32
}

// Followers runs one Fetcher per source broker for the partitions this
// broker follows, as the metadata assigns them.
type Followers struct {
	cfg    FetcherConfig
	dial   Dialer
	now    func() time.Time
	logger *slog.Logger
	ctx    context.Context

	mu       sync.Mutex // guards fetchers
	fetchers map[int32]*runningFetcher
	closed   bool
	wg       sync.WaitGroup
}

type runningFetcher struct {
	f      *Fetcher
	addr   string
	cancel context.CancelFunc
	close  func()
}

// NewFollowers returns the follower side of replication; fetchers live until
// ctx ends or Close.
func NewFollowers(ctx context.Context, cfg FetcherConfig, dial Dialer, now func() time.Time, logger *slog.Logger) (*Followers, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if dial == nil {
		return nil, fmt.Errorf("replication: followers need a dialer")
	}
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Followers{cfg: cfg, dial: dial, now: now, logger: logger.With("component", "replication"), ctx: ctx,
		fetchers: map[int32]*runningFetcher{}}, nil
}

// Apply makes the fetchers copy exactly the given partitions: fetchers for
// new source brokers (or brokers whose address changed) start, those left
// without partitions stop.
func (fs *Followers) Apply(follows []Follow) {
	bySource := map[int32]map[partition.TopicPartition]followed{}
	addrs := map[int32]string{}
	for _, f := range follows {
		if f.Partition == nil || f.Leader < 0 || f.LeaderAddr == "" {
			continue
		}
		m := bySource[f.Leader]
		if m == nil {
			m = map[partition.TopicPartition]followed{}
			bySource[f.Leader] = m
		}
		m[partition.TopicPartition{Topic: f.Partition.Topic, Partition: f.Partition.Index}] = followed{p: f.Partition, leaderEpoch: f.LeaderEpoch}
		addrs[f.Leader] = f.LeaderAddr
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return
	}
	for id, rf := range fs.fetchers {
		if _, ok := bySource[id]; !ok || addrs[id] != rf.addr {
			fs.stopLocked(id)
		}
	}
	for id, parts := range bySource {
		rf, ok := fs.fetchers[id]
		if !ok {
			client, closeFn, err := fs.dial(addrs[id])
			if err != nil {
				fs.logger.Error("cannot reach a leader", "source", id, "addr", addrs[id], "err", err)
				continue
			}
			ctx, cancel := context.WithCancel(fs.ctx)
			rf = &runningFetcher{f: newFetcher(fs.cfg, id, client, fs.now, fs.logger), addr: addrs[id], cancel: cancel, close: closeFn}
			fs.fetchers[id] = rf
			fs.wg.Add(1)
			go func() {
				defer fs.wg.Done()
				rf.f.run(ctx)
			}()
		}
		rf.f.set(parts)
	}
}

func (fs *Followers) stopLocked(id int32) {
	rf := fs.fetchers[id]
	delete(fs.fetchers, id)
	rf.cancel()
	go func() {
		// Closing the client also ends a fetch in flight.
		rf.close()
	}()
}

// Sources returns the broker ids fetched from.
func (fs *Followers) Sources() []int32 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]int32, 0, len(fs.fetchers))
	for id := range fs.fetchers {
		out = append(out, id)
	}
	return out
}

// Close stops every fetcher and waits for them.
func (fs *Followers) Close() {
	fs.mu.Lock()
	fs.closed = true
	for id, rf := range fs.fetchers {
		delete(fs.fetchers, id)
		rf.cancel()
		rf.close()
	}
	fs.mu.Unlock()
	fs.wg.Wait()
}
