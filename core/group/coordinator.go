package group

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/partition"
)

// Config is what the coordinator enforces; ConfigFrom derives it from the
// broker's [groups] settings.
type Config struct {
	InitialRebalanceDelay  time.Duration
	MinSessionTimeout      time.Duration
	MaxSessionTimeout      time.Duration
	MaxGroupSize           int
	OffsetsRetention       time.Duration
	RetentionCheckInterval time.Duration
	OffsetMetadataMaxBytes int
	// Consumer (KIP-848) groups.
	ConsumerSessionTimeout    time.Duration
	ConsumerHeartbeatInterval time.Duration
	ConsumerAssignors         []string
	// WriteTimeout bounds the wait of a write for the ISR;
	// DefaultWriteTimeout when zero.
	WriteTimeout time.Duration
	// Sync makes every write durable on the leader's disk before it
	// succeeds (log.durability = fsync), flushed while the ISR catches up.
	Sync bool
	// Streams (KIP-1071) groups.
	StreamsSessionTimeout        time.Duration
	StreamsHeartbeatInterval     time.Duration
	StreamsNumStandbyReplicas    int
	StreamsAcceptableRecoveryLag int64
	StreamsTaskOffsetInterval    time.Duration
}

// ConfigFrom turns the broker's group settings into a Config.
func ConfigFrom(g config.Groups) Config {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	return Config{
		InitialRebalanceDelay:     ms(g.GroupInitialRebalanceDelayMs),
		MinSessionTimeout:         ms(g.GroupMinSessionTimeoutMs),
		MaxSessionTimeout:         ms(g.GroupMaxSessionTimeoutMs),
		MaxGroupSize:              int(g.GroupMaxSize),
		OffsetsRetention:          time.Duration(g.OffsetsRetentionMinutes) * time.Minute,
		RetentionCheckInterval:    ms(g.OffsetsRetentionCheckIntervalMs),
		OffsetMetadataMaxBytes:    int(g.OffsetMetadataMaxBytes),
		ConsumerSessionTimeout:    ms(g.GroupConsumerSessionTimeoutMs),
		ConsumerHeartbeatInterval: ms(g.GroupConsumerHeartbeatIntervalMs),
		ConsumerAssignors:         append([]string(nil), g.GroupConsumerAssignors...),
		StreamsSessionTimeout:     ms(g.GroupStreamsSessionTimeoutMs),
		StreamsHeartbeatInterval:  ms(g.GroupStreamsHeartbeatIntervalMs),
		StreamsNumStandbyReplicas: int(g.GroupStreamsNumStandbyReplicas),
		// Kafka's defaults of the acceptable recovery lag and task offset
		// interval it tells members.
		StreamsAcceptableRecoveryLag: 10000,
		StreamsTaskOffsetInterval:    60 * time.Second,
	}
}

// TopicInfo is what consumer groups need to know of a topic.
type TopicInfo struct {
	ID         [16]byte
	Partitions int32
}

// Options carries what the coordinator needs from its surroundings.
type Options struct {
	Clock  Clock
	Logger *slog.Logger
	// Topics lists the topics that exist now, by name. Consumer (KIP-848)
	// groups assign their partitions from it; nil means no topics.
	Topics func() map[string]TopicInfo
	// GroupConfigs returns the configs set on a group (the GROUP config
	// resource), by name; nil means none. Streams groups take their
	// streams.* settings from it (streams_config.go).
	GroupConfigs func(groupID string) map[string]string
}

// Leader is a __consumer_offsets partition this broker leads.
type Leader struct {
	Partition *partition.Partition
	Epoch     int32
}

// Coordinator is the group coordinator of one broker. It serves the groups
// of the __consumer_offsets partitions it was told it leads, each partition
// being a shard with its own lock.
type Coordinator struct {
	cfg    Config
	clock  Clock
	log    *slog.Logger
	topics func() map[string]TopicInfo
	// groupConfigs is Options.GroupConfigs; it is called under a shard's
	// lock and must not call back into the coordinator.
	groupConfigs func(groupID string) map[string]string

	mu            sync.RWMutex // guards numPartitions, shards, closed
	numPartitions int32
	shards        map[int32]*shard
	closed        bool
}

// New returns a coordinator leading no partition yet.
func New(cfg Config, opts Options) *Coordinator {
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Topics == nil {
		opts.Topics = func() map[string]TopicInfo { return nil }
	}
	if opts.GroupConfigs == nil {
		opts.GroupConfigs = func(string) map[string]string { return nil }
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.MaxGroupSize <= 0 {
		cfg.MaxGroupSize = 1<<31 - 1
	}
	return &Coordinator{cfg: cfg, clock: opts.Clock, log: opts.Logger.With("component", "group"),
		topics: opts.Topics, groupConfigs: opts.GroupConfigs, shards: map[int32]*shard{}}
}

// Assign tells the coordinator how many partitions __consumer_offsets has
// and which of them this broker leads. Partitions it no longer leads are
// resigned (their waiting members are told NOT_COORDINATOR); newly led ones
// are loaded in the background. It is cheap when nothing changed.
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
		s := newShard(c, idx, l.Partition, l.Epoch)
		c.shards[idx] = s
		go s.load()
	}
}

// Close resigns every partition; later requests get NOT_COORDINATOR.
func (c *Coordinator) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for idx, s := range c.shards {
		s.resign()
		delete(c.shards, idx)
	}
}

// NumPartitions is the partition count of __consumer_offsets last assigned.
func (c *Coordinator) NumPartitions() int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.numPartitions
}

// WaitLoaded blocks until every partition assigned so far is loaded.
func (c *Coordinator) WaitLoaded(ctx context.Context) error {
	for _, s := range c.allShards() {
		select {
		case <-s.loadedCh:
		case <-ctx.Done():
			return fmt.Errorf("group: waiting for partition %d to load: %w", s.index, ctx.Err())
		}
	}
	return nil
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

// lockShard finds the shard coordinating groupID and returns it locked, or
// the error that says why this broker cannot serve the group now.
func (c *Coordinator) lockShard(groupID string) (*shard, error) {
	c.mu.RLock()
	idx := PartitionFor(groupID, c.numPartitions)
	s := c.shards[idx]
	c.mu.RUnlock()
	if s == nil {
		return nil, ErrNotCoordinator
	}
	s.mu.Lock()
	if err := s.usable(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	return s, nil
}

// Run removes expired offsets and empty groups every retention check
// interval until ctx ends, then resigns every partition.
func (c *Coordinator) Run(ctx context.Context) error {
	defer c.Close()
	stop := c.StartExpiry()
	defer stop()
	<-ctx.Done()
	return nil
}

// StartExpiry arms the retention check on the coordinator's clock; each
// check runs ExpireOffsets and arms the next. The returned func stops it.
func (c *Coordinator) StartExpiry() (stop func()) {
	var mu sync.Mutex // guards t, stopped
	var t Timer
	stopped := false
	var arm func()
	arm = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		t = c.clock.AfterFunc(c.cfg.RetentionCheckInterval, func() {
			c.ExpireOffsets()
			arm()
		})
	}
	arm()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
}
