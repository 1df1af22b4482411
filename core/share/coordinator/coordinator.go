package coordinator

import (
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/share"
)

// Broker is what share groups need from the broker they run in.
type Broker interface {
	// Partition returns a partition hosted here.
	Partition(topic string, index int32) (*partition.Partition, bool)
	// Image is the current metadata image.
	Image() *controller.Image
	// EnsureInternalTopic returns an internal topic, creating it first
	// when it does not exist (its replication factor capped by the live
	// brokers, configs built from the capped value).
	EnsureInternalTopic(name string, partitions int32, rf int16, configFor func(rf int16) map[string]string) (*controller.Topic, error)
	// GroupPartition is a group's __consumer_offsets partition when this
	// broker coordinates the group, nil otherwise.
	GroupPartition(group string) *partition.Partition
	// Send sends an inter-broker request to broker id and returns its
	// answer; the client is kept apart from other inter-broker traffic.
	Send(id int32, req kmsg.Request) (kmsg.Response, error)
}

// Config are the settings of share groups on this broker.
type Config struct {
	NodeID int32
	Groups config.Groups
	// Fsync writes share state to disk before it is acknowledged.
	Fsync bool
	// WriteTimeout bounds a share-state write's wait for the ISR; 30 s
	// when not positive.
	WriteTimeout time.Duration
	Logger       *slog.Logger
	Now          func() time.Time
}

// Coordinator is what this broker holds of share groups: the groups it
// coordinates, the share sessions of its clients, the share-partitions of
// the partitions it leads and the share state of the __share_group_state
// partitions it leads.
type Coordinator struct {
	cfg    Config
	broker Broker
	log    *slog.Logger

	groups   *share.Groups
	sessions *share.Sessions
	parts    *share.Partitions
	// Store is the share coordinator: the state partitions led here.
	Store *Store

	// epochMu guards epochs: the leader epoch of the data partition each
	// share-partition was loaded under (after a leadership change the
	// state is read again) and the state epoch it read.
	epochMu sync.Mutex
	epochs  map[share.PartitionKey]loadedEpochs
	// writeMu orders each share-partition's snapshots with their writes,
	// so the state never goes back to an older snapshot; striped by key.
	writeMu [64]sync.Mutex

	// memberMu guards written (the members each group's durable records
	// hold) and loadedGroups (the leader epoch each __consumer_offsets
	// partition's share groups were read back in).
	memberMu     sync.Mutex
	written      map[string]map[string]bool
	loadedGroups map[int32]int32

	topicsMu  sync.Mutex // guards topicsIm, topics
	topicsIm  *controller.Image
	topicsMap map[string]share.TopicInfo
}

type loadedEpochs struct {
	leader, state int32
}

// New returns the share group state of a broker.
func New(cfg Config, b Broker) *Coordinator {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	g := cfg.Groups
	c := &Coordinator{
		cfg: cfg, broker: b, log: cfg.Logger,
		epochs:  map[share.PartitionKey]loadedEpochs{},
		written: map[string]map[string]bool{}, loadedGroups: map[int32]int32{},
		sessions: share.NewSessions(int(g.GroupShareMaxShareSessions)),
		parts: share.NewPartitions(share.PartitionConfig{
			RecordLockDuration: millis(g.GroupShareRecordLockDurationMs),
			DeliveryCountLimit: int(g.GroupShareDeliveryCountLimit),
			MaxRecordLocks:     int(g.GroupSharePartitionMaxRecordLocks),
		}, cfg.Now),
	}
	c.Store = newStore(c)
	c.groups = share.NewGroups(share.GroupsConfig{
		SessionTimeout:    millis(g.GroupShareSessionTimeoutMs),
		HeartbeatInterval: millis(g.GroupShareHeartbeatIntervalMs),
		MaxSize:           int(g.GroupShareMaxSize),
	}, cfg.Now, c.Topics, func(group, member string) {
		c.parts.ReleaseMember(group, member)
		c.sessions.Drop(group, member)
		// Called under the group's lock: the writes must not wait there.
		go func() {
			c.PersistGroup(group)
			if err := c.PersistMembership(group); err != nil {
				c.log.Warn("writing share group membership", "group", group, "err", err)
			}
		}()
	})
	return c
}

func millis(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// Groups are the share groups this broker coordinates.
func (c *Coordinator) Groups() *share.Groups { return c.groups }

// Sessions are the share sessions of this broker's clients.
func (c *Coordinator) Sessions() *share.Sessions { return c.sessions }

// Partitions are the share-partitions this broker serves.
func (c *Coordinator) Partitions() *share.Partitions { return c.parts }

// Now is the coordinator's clock.
func (c *Coordinator) Now() time.Time { return c.cfg.Now() }

// Topics lists the topics that exist, by name.
func (c *Coordinator) Topics() map[string]share.TopicInfo {
	im := c.broker.Image()
	c.topicsMu.Lock()
	defer c.topicsMu.Unlock()
	if c.topicsIm != im {
		m := make(map[string]share.TopicInfo, len(im.Topics))
		for name, t := range im.Topics {
			m[name] = share.TopicInfo{ID: t.ID, Partitions: int32(len(t.Partitions))}
		}
		c.topicsMap, c.topicsIm = m, im
	}
	return c.topicsMap
}

// TopicName resolves a topic id from the metadata image.
func (c *Coordinator) TopicName(id [16]byte) (string, bool) {
	t, ok := c.broker.Image().TopicsByID[uuid.UUID(id)]
	if !ok {
		return "", false
	}
	return t.Name, true
}

// Settings are the group-level configs a share-partition reads.
type Settings struct {
	Earliest      bool // share.auto.offset.reset=earliest
	ReadCommitted bool // share.isolation.level=read_committed
	LockDuration  time.Duration
	DeliveryLimit int
}

// Settings returns a share group's settings: its group configs over the
// broker's.
func (c *Coordinator) Settings(groupID string) Settings {
	g := c.cfg.Groups
	s := Settings{LockDuration: millis(g.GroupShareRecordLockDurationMs), DeliveryLimit: int(g.GroupShareDeliveryCountLimit)}
	cfg := c.broker.Image().Configs[controller.ConfigResource{Type: controller.ResourceGroup, Name: groupID}]
	if v, ok := cfg["share.auto.offset.reset"]; ok {
		s.Earliest = v == "earliest"
	}
	if v, ok := cfg["share.isolation.level"]; ok {
		s.ReadCommitted = v == "read_committed"
	}
	if v, ok := cfg["share.record.lock.duration.ms"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			s.LockDuration = millis(n)
		}
	}
	if v, ok := cfg["share.delivery.count.limit"]; ok {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			s.DeliveryLimit = int(n)
		}
	}
	return s
}

// LockMillis is a group's acquisition lock duration in milliseconds.
func (c *Coordinator) LockMillis(groupID string) int32 {
	return int32(c.Settings(groupID).LockDuration.Milliseconds())
}

// sharePartition returns the share-partition of a group on a partition
// this broker leads, restoring it from its durable state or starting it at
// the log start or the high watermark as share.auto.offset.reset says, and
// applying the group's configs.
func (c *Coordinator) sharePartition(groupID string, tp share.TopicPartition, p *partition.Partition) (*share.Partition, error) {
	set := c.Settings(groupID)
	k := share.PartitionKey{Group: groupID, TopicPartition: tp}
	_, epoch := p.Leadership()
	c.epochMu.Lock()
	if e, ok := c.epochs[k]; ok && e.leader != epoch {
		c.parts.Delete(k)
		delete(c.epochs, k)
	}
	c.epochMu.Unlock()
	sp, err := c.parts.Get(k, func() (share.Snapshot, bool, error) {
		s, stateEpoch, ok, err := c.readState(k, epoch)
		if err == nil {
			c.epochMu.Lock()
			c.epochs[k] = loadedEpochs{leader: epoch, state: stateEpoch}
			c.epochMu.Unlock()
		}
		return s, ok, err
	}, func() int64 {
		off := p.Offsets()
		if set.Earliest {
			return off.LogStartOffset
		}
		return off.HighWatermark
	})
	if err != nil {
		return nil, err
	}
	sp.SetConfig(share.PartitionConfig{RecordLockDuration: set.LockDuration, DeliveryCountLimit: set.DeliveryLimit})
	return sp, nil
}

// loaded returns the epochs a share-partition was loaded under.
func (c *Coordinator) loaded(k share.PartitionKey) loadedEpochs {
	c.epochMu.Lock()
	defer c.epochMu.Unlock()
	if e, ok := c.epochs[k]; ok {
		return e
	}
	return loadedEpochs{leader: -1}
}

// SortTopicPartitions orders topic partitions by topic id and partition.
func SortTopicPartitions(tps []share.TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		a, b := tps[i], tps[j]
		if a.TopicID != b.TopicID {
			return string(a.TopicID[:]) < string(b.TopicID[:])
		}
		return a.Partition < b.Partition
	})
}
