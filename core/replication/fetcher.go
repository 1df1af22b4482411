package replication

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
)

// Client sends one request to one broker; a kgo.Broker is one.
type Client interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// Dialer returns a client for a source broker's address and a func that
// closes it.
type Dialer func(addr string) (Client, func(), error)

// KgoDialer dials with a franz-go client whose only seed is addr; requests go
// to that broker directly. opts secure the connection to the inter-broker
// listener (kgo.DialTLSConfig, kgo.SASL).
func KgoDialer(clientID string, opts ...kgo.Opt) Dialer {
	return func(addr string) (Client, func(), error) {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(clientID)}, opts...)...)
		if err != nil {
			return nil, nil, fmt.Errorf("replication: client for %s: %w", addr, err)
		}
		seeds := cl.SeedBrokers()
		if len(seeds) != 1 {
			cl.Close()
			return nil, nil, fmt.Errorf("replication: client for %s has %d seeds", addr, len(seeds))
		}
		return seeds[0], cl.Close, nil
	}
}

// FetcherConfig tunes the follower fetches.
type FetcherConfig struct {
	// NodeID is this broker's id, sent as the replica id.
	NodeID int32
	// MaxWait, MinBytes, MaxBytes and PartitionMaxBytes shape each fetch
	// (replica.fetch.wait.max.ms, replica.fetch.min.bytes,
	// replica.fetch.response.max.bytes, replica.fetch.max.bytes).
	MaxWait           time.Duration
	MinBytes          int32
	MaxBytes          int32
	PartitionMaxBytes int32
	// Backoff is the pause after a failed fetch or a partition error
	// (replica.fetch.backoff.ms).
	Backoff time.Duration
	// Sync makes every appended fetch durable before the next fetch reports
	// it to the leader (durability = fsync).
	Sync bool
	// Quota is the follower side of the replication throttle
	// (follower.replication.throttled.rate); nil never throttles.
	Quota *Quota
}

// DefaultFetcherConfig returns Kafka's defaults for node.
func DefaultFetcherConfig(node int32) FetcherConfig {
	return FetcherConfig{NodeID: node, MaxWait: 500 * time.Millisecond, MinBytes: 1, MaxBytes: 10 << 20,
		PartitionMaxBytes: 1 << 20, Backoff: time.Second}
}

// Validate checks the config.
func (c FetcherConfig) Validate() error {
	if c.NodeID < 0 || c.MaxWait <= 0 || c.MaxBytes <= 0 || c.PartitionMaxBytes <= 0 || c.Backoff <= 0 {
		return fmt.Errorf("replication: fetcher config %+v: node id, wait, sizes and backoff must be positive", c)
	}
	return nil
}

// followed is one partition a fetcher copies.
type followed struct {
	p           *partition.Partition
	leaderEpoch int32
	// pausedUntil holds back a partition after an error.
	pausedUntil time.Time
	// inSync is true when the last fetch brought the replica up to the
	// leader's high watermark (Kafka's lag <= 0); such a replica is never
	// throttled. It starts false for a new leader epoch.
	inSync bool
}

// Fetcher copies the partitions led by one source broker into the local
// replicas: one fetch loop, one connection.
type Fetcher struct {
	cfg    FetcherConfig
	source int32
	client Client
	logger *slog.Logger
	now    func() time.Time

	mu    sync.Mutex // guards parts
	parts map[partition.TopicPartition]*followed
	wake  chan struct{} // partitions were added
}

func newFetcher(cfg FetcherConfig, source int32, client Client, now func() time.Time, logger *slog.Logger) *Fetcher {
	return &Fetcher{cfg: cfg, source: source, client: client, now: now,
		logger: logger.With("source", source), parts: map[partition.TopicPartition]*followed{}, wake: make(chan struct{}, 1)}
}

// set replaces the followed partitions (each with the leader epoch the
// metadata gives) and returns how many remain.
func (f *Fetcher) set(parts map[partition.TopicPartition]followed) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for tp, cur := range f.parts {
		next, ok := parts[tp]
		if !ok || next.p != cur.p {
			delete(f.parts, tp)
		}
	}
	for tp, next := range parts {
		if cur, ok := f.parts[tp]; ok {
			if next.leaderEpoch != cur.leaderEpoch {
				cur.leaderEpoch, cur.pausedUntil, cur.inSync = next.leaderEpoch, time.Time{}, false
			}
			continue
		}
		n := next
		f.parts[tp] = &n
	}
	select {
	case f.wake <- struct{}{}:
	default:
	}
	return len(f.parts)
}

// request builds the next fetch from the partitions not paused, or nil.
// A throttled replica that is not in sync is left out while the follower
// quota is exceeded; the others are fetched as usual.
func (f *Fetcher) request() (*kmsg.FetchRequest, map[partition.TopicPartition]*followed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = f.cfg.NodeID
	req.ReplicaState.ID = f.cfg.NodeID
	req.ReplicaState.Epoch = -1
	req.MaxWaitMillis = int32(f.cfg.MaxWait / time.Millisecond)
	req.MinBytes = f.cfg.MinBytes
	req.MaxBytes = f.cfg.MaxBytes
	req.SessionID, req.SessionEpoch = 0, -1
	sent := map[partition.TopicPartition]*followed{}
	topics := map[string]int{}
	for tp, fp := range f.parts {
		if now.Before(fp.pausedUntil) {
			continue
		}
		if fp.p.Offline() != nil {
			// Its log dir failed: it can store nothing until a restart,
			// as Kafka drops offline replicas from its fetchers.
			continue
		}
		if f.cfg.Quota != nil && f.cfg.Quota.ShouldThrottle(tp.Topic, tp.Partition, fp.inSync) {
			continue
		}
		i, ok := topics[tp.Topic]
		if !ok {
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = tp.Topic, fp.p.TopicID
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			topics[tp.Topic] = i
		}
		offset, lastEpoch := fp.p.FetchPosition()
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = tp.Partition
		rp.CurrentLeaderEpoch = fp.leaderEpoch
		rp.FetchOffset = offset
		rp.LastFetchedEpoch = lastEpoch
		rp.LogStartOffset = fp.p.Offsets().LogStartOffset
		rp.PartitionMaxBytes = f.cfg.PartitionMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
		sent[tp] = fp
	}
	if len(sent) == 0 {
		return nil, nil
	}
	return req, sent
}

// run fetches until ctx ends.
func (f *Fetcher) run(ctx context.Context) {
	for ctx.Err() == nil {
		req, sent := f.request()
		if req == nil {
			f.idle(ctx)
			continue
		}
		if err := f.fetchOnce(ctx, req, sent); err != nil {
			if ctx.Err() != nil {
				return
			}
			f.logger.Warn("follower fetch failed", "err", err)
			f.sleep(ctx, f.cfg.Backoff)
		}
	}
}

// idle waits for partitions or the end of a pause.
func (f *Fetcher) idle(ctx context.Context) {
	t := time.NewTimer(f.cfg.Backoff)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-f.wake:
	case <-t.C:
	}
}

func (f *Fetcher) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// fetchOnce sends one fetch and applies the answer to every partition in it.
func (f *Fetcher) fetchOnce(ctx context.Context, req *kmsg.FetchRequest, sent map[partition.TopicPartition]*followed) error {
	kresp, err := f.client.Request(ctx, req)
	if err != nil {
		return fmt.Errorf("replication: fetch from %d: %w", f.source, err)
	}
	resp, ok := kresp.(*kmsg.FetchResponse)
	if !ok {
		return fmt.Errorf("replication: fetch from %d: unexpected response %T", f.source, kresp)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("replication: fetch from %d: %w", f.source, err)
	}
	byID := map[[16]byte]string{}
	for _, t := range req.Topics {
		byID[t.TopicID] = t.Topic
	}
	for _, rt := range resp.Topics {
		name := rt.Topic
		if name == "" {
			name = byID[rt.TopicID]
		}
		for i := range rt.Partitions {
			rp := &rt.Partitions[i]
			tp := partition.TopicPartition{Topic: name, Partition: rp.Partition}
			fp, ok := sent[tp]
			if !ok || !f.current(tp, fp) {
				// Not asked for, or reassigned while the fetch was out.
				continue
			}
			if err := f.apply(ctx, fp, rp); err != nil {
				f.logger.Warn("follower fetch of a partition failed", "topic", tp.Topic, "partition", tp.Partition, "err", err)
				f.pause(fp)
			}
		}
	}
	return nil
}

// current reports whether fp is still followed through this fetcher.
func (f *Fetcher) current(tp partition.TopicPartition, fp *followed) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts[tp] == fp
}

func (f *Fetcher) pause(fp *followed) {
	f.mu.Lock()
	fp.pausedUntil = f.now().Add(f.cfg.Backoff)
	f.mu.Unlock()
}

// apply handles one partition of a fetch response.
func (f *Fetcher) apply(ctx context.Context, fp *followed, rp *kmsg.FetchResponseTopicPartition) error {
	p := fp.p
	switch err := kerr.ErrorForCode(rp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.OffsetOutOfRange):
		return f.handleOutOfRange(ctx, fp)
	default:
		// NOT_LEADER, FENCED/UNKNOWN_LEADER_EPOCH, unknown partition: the
		// metadata will bring the new leadership; wait for it.
		return fmt.Errorf("replication: %s-%d from %d: %w", p.Topic, p.Index, f.source, err)
	}
	if rp.DivergingEpoch.EndOffset >= 0 || rp.DivergingEpoch.Epoch >= 0 {
		return f.truncate(p, rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset)
	}
	if len(rp.RecordBatches) > 0 {
		res, err := p.AppendAsFollower(rp.RecordBatches)
		if errors.Is(err, log.ErrOffsetOrder) {
			// The leader's batch starts before our log end: our log ends
			// inside one of its batches. Cut back to a boundary we share.
			if h, ok := firstBase(rp.RecordBatches); ok {
				return p.TruncateTo(h)
			}
		}
		if err != nil {
			return err
		}
		if q := f.cfg.Quota; q != nil && q.IsThrottled(p.Topic, p.Index) {
			// Every byte fetched for a throttled replica counts, in sync
			// or not, as Kafka's follower records it.
			q.Record(len(rp.RecordBatches))
		}
		if res.Batches > 0 && f.cfg.Sync {
			if err := p.Sync(); err != nil {
				return err
			}
		}
	}
	p.SetFollowerHighWatermark(rp.HighWatermark)
	inSync := p.Offsets().LogEndOffset >= rp.HighWatermark
	f.mu.Lock()
	fp.inSync = inSync
	f.mu.Unlock()
	if start := rp.LogStartOffset; start > p.Offsets().LogStartOffset {
		// Follow the leader's retention and DeleteRecords, never past what
		// is committed here.
		if hw := p.Offsets().HighWatermark; start <= hw {
			if err := p.Log().DeleteRecordsBefore(start); err != nil {
				return fmt.Errorf("replication: %s-%d: follow log start %d: %w", p.Topic, p.Index, start, err)
			}
		}
	}
	return nil
}

// truncate cuts the local log where the leader says it diverged.
func (f *Fetcher) truncate(p *partition.Partition, epoch int32, end int64) error {
	off := p.Offsets()
	tr := truncationFor(epoch, end, p.Log().EndOffsetForEpoch, off.LogEndOffset, off.HighWatermark)
	f.logger.Info("truncating a diverged follower", "topic", p.Topic, "partition", p.Index,
		"leader_epoch", epoch, "leader_end", end, "log_end", off.LogEndOffset, "to", tr.offset, "complete", tr.complete)
	return p.TruncateTo(tr.offset)
}

// handleOutOfRange asks the leader for its log start and end: a follower
// behind the leader's log start starts over there, one past the leader's end
// truncates to it.
func (f *Fetcher) handleOutOfRange(ctx context.Context, fp *followed) error {
	p := fp.p
	earliest, err := f.listOffset(ctx, fp, -2)
	if err != nil {
		return err
	}
	latest, err := f.listOffset(ctx, fp, -1)
	if err != nil {
		return err
	}
	leo := p.Offsets().LogEndOffset
	switch {
	case leo > latest:
		f.logger.Warn("follower past its leader's end, truncating", "topic", p.Topic, "partition", p.Index, "log_end", leo, "leader_end", latest)
		return p.TruncateTo(latest)
	case leo < earliest:
		f.logger.Info("follower behind its leader's log start, starting over", "topic", p.Topic, "partition", p.Index, "log_end", leo, "leader_start", earliest)
		return p.ResetTo(earliest)
	}
	return nil
}

func (f *Fetcher) listOffset(ctx context.Context, fp *followed, ts int64) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = f.cfg.NodeID
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = fp.p.Topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.Timestamp = fp.p.Index, fp.leaderEpoch, ts
	t.Partitions = append(t.Partitions, rp)
	req.Topics = append(req.Topics, t)
	kresp, err := f.client.Request(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("replication: list offsets from %d: %w", f.source, err)
	}
	resp, ok := kresp.(*kmsg.ListOffsetsResponse)
	if !ok || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, fmt.Errorf("replication: list offsets from %d: malformed answer", f.source)
	}
	sp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(sp.ErrorCode); err != nil {
		return 0, fmt.Errorf("replication: list offsets from %d: %w", f.source, err)
	}
	return sp.Offset, nil
}

func firstBase(batches []byte) (int64, bool) {
	h, err := record.ParseHeader(batches)
	if err != nil || h.BaseOffset < 0 {
		return 0, false
	}
	return h.BaseOffset, true
}
