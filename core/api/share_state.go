package api

import (
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/share"
)

// shareState is what this broker holds of share groups: the groups it
// coordinates, the share sessions of its clients and the share-partitions
// of the partitions it leads.
type shareState struct {
	// persistMu orders snapshots with their appends to __share_group_state,
	// so the log never holds an older state after a newer one.
	persistMu sync.Mutex
	groups    *share.Groups
	// epochs holds the leader epoch of the data partition each
	// share-partition was loaded under: after a leadership change the
	// state is read again from __share_group_state.
	epochMu  sync.Mutex
	epochs   map[share.PartitionKey]int32
	sessions *share.Sessions
	parts    *share.Partitions
}

func (b *Broker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// share returns the broker's share group state, built on first use from
// the [groups] settings.
func (b *Broker) share() *shareState {
	b.shareOnce.Do(func() {
		g := b.Config.Groups
		ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
		st := &shareState{
			epochs:   map[share.PartitionKey]int32{},
			sessions: share.NewSessions(int(g.GroupShareMaxShareSessions)),
			parts: share.NewPartitions(share.PartitionConfig{
				RecordLockDuration: ms(g.GroupShareRecordLockDurationMs),
				DeliveryCountLimit: int(g.GroupShareDeliveryCountLimit),
				MaxRecordLocks:     int(g.GroupSharePartitionMaxRecordLocks),
			}, b.now),
		}
		st.groups = share.NewGroups(share.GroupsConfig{
			SessionTimeout:    ms(g.GroupShareSessionTimeoutMs),
			HeartbeatInterval: ms(g.GroupShareHeartbeatIntervalMs),
			MaxSize:           int(g.GroupShareMaxSize),
		}, b.now, b.shareTopics, func(group, member string) {
			st.parts.ReleaseMember(group, member)
			st.sessions.Drop(group, member)
			// Called under the group's lock: the write must not wait there.
			go b.persistShareGroup(group)
		})
		b.shr = st
	})
	return b.shr
}

func (b *Broker) shareTopics() map[string]share.TopicInfo {
	gt := b.GroupTopics()
	out := make(map[string]share.TopicInfo, len(gt))
	for name, t := range gt {
		out[name] = share.TopicInfo{ID: t.ID, Partitions: t.Partitions}
	}
	return out
}

// topicNameByID resolves a topic id from the metadata image.
func (b *Broker) topicNameByID(id [16]byte) (string, bool) {
	t, ok := b.Controller.Image().TopicsByID[uuid.UUID(id)]
	if !ok {
		return "", false
	}
	return t.Name, true
}

// shareGroupSettings are the group-level configs a share-partition reads.
type shareGroupSettings struct {
	earliest      bool // share.auto.offset.reset=earliest
	readCommitted bool // share.isolation.level=read_committed
	lockDuration  time.Duration
	deliveryLimit int
}

// shareSettings returns a share group's settings: its group configs over
// the broker's.
func (b *Broker) shareSettings(groupID string) shareGroupSettings {
	g := b.Config.Groups
	s := shareGroupSettings{
		lockDuration:  time.Duration(g.GroupShareRecordLockDurationMs) * time.Millisecond,
		deliveryLimit: int(g.GroupShareDeliveryCountLimit),
	}
	cfg := b.groupConfigs(groupID)
	if v, ok := cfg["share.auto.offset.reset"]; ok {
		s.earliest = v == "earliest"
	}
	if v, ok := cfg["share.isolation.level"]; ok {
		s.readCommitted = v == "read_committed"
	}
	if v, ok := cfg["share.record.lock.duration.ms"]; ok {
		if d, err := parseMillis(v); err == nil {
			s.lockDuration = d
		}
	}
	if v, ok := cfg["share.delivery.count.limit"]; ok {
		if d, err := parseInt(v); err == nil {
			s.deliveryLimit = int(d)
		}
	}
	return s
}

// sharePartition returns the share-partition of a group on a partition
// this broker leads, starting it at the log start or the high watermark
// as share.auto.offset.reset says, and applying the group's configs.
func (b *Broker) sharePartition(groupID string, tp share.TopicPartition, p *partition.Partition) (*share.Partition, error) {
	set := b.shareSettings(groupID)
	k := share.PartitionKey{Group: groupID, TopicPartition: tp}
	st := b.share()
	_, epoch := p.Leadership()
	st.epochMu.Lock()
	if e, ok := st.epochs[k]; ok && e != epoch {
		st.parts.Delete(k)
	}
	st.epochs[k] = epoch
	st.epochMu.Unlock()
	sp, err := b.share().parts.Get(k, func() (share.Snapshot, bool, error) { return b.loadShareState(k) }, func() int64 {
		off := p.Offsets()
		if set.earliest {
			return off.LogStartOffset
		}
		return off.HighWatermark
	})
	if err != nil {
		return nil, err
	}
	sp.SetConfig(share.PartitionConfig{RecordLockDuration: set.lockDuration, DeliveryCountLimit: set.deliveryLimit})
	return sp, nil
}

func sortTopicPartitions(tps []share.TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		a, b := tps[i], tps[j]
		if a.TopicID != b.TopicID {
			return string(a.TopicID[:]) < string(b.TopicID[:])
		}
		return a.Partition < b.Partition
	})
}
