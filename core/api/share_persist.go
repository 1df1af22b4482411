package api

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/replication"
	"github.com/gregorbroker/gregor/core/share"
)

// Share-partition state is written to __share_group_state, one
// ShareSnapshot record per change, before the change is answered: an
// acquisition (its delivery counts) before the records are sent, an
// acknowledgement before it is confirmed. A write is acknowledged only once
// the partition's ISR has it, exactly like an acks=all produce, and on
// fsync durability once it is on disk. When this broker starts serving a
// share-partition, it restores the last snapshot of it.
//
// The state partition of a share-partition is chosen as Kafka's share
// coordinator chooses it: the Java hash of "group:topicId:partition"
// modulo the partition count. When another broker leads that partition,
// the state is written to it with an acks=all Produce and read back with
// Fetch over the inter-broker clients (share_remote.go); Kafka's own
// share-state RPCs (83-87) are not used.

// Kafka's defaults for the state topic (share.coordinator.state.topic.*).
const (
	shareStateTopicPartitions = 50
	shareStateTopicRF         = 3
	shareStateSegmentBytes    = 100 << 20
)

// errShareStateUnavailable is a state partition that should be led here
// but is not ready yet.
var errShareStateUnavailable = errors.New("api: the __share_group_state partition is not available yet")

func (b *Broker) shareStateTopic() (*controller.Topic, error) {
	return b.ensureInternalTopic(internalTopic{
		name: share.StateTopic, partitions: shareStateTopicPartitions, replicationFactor: shareStateTopicRF,
		configFor: func(rf int16) map[string]string {
			return map[string]string{
				"cleanup.policy":      "compact",
				"segment.bytes":       strconv.Itoa(shareStateSegmentBytes),
				"compression.type":    "producer",
				"min.insync.replicas": strconv.Itoa(int(min(rf, 2))),
			}
		},
		unavailable: errShareStateUnavailable,
	})
}

// shareStateLeader is the __share_group_state partition holding k's
// state and its leader.
func (b *Broker) shareStateLeader(k share.PartitionKey) (idx, leader int32, err error) {
	t, err := b.shareStateTopic()
	if err != nil {
		return -1, -1, err
	}
	coordKey := k.Group + ":" + uuid.UUID(k.TopicID).String() + ":" + strconv.Itoa(int(k.Partition))
	idx = group.PartitionFor(coordKey, int32(len(t.Partitions)))
	if leader = t.Partitions[idx].Leader; leader < 0 {
		return idx, leader, errShareStateUnavailable
	}
	return idx, leader, nil
}

// shareStatePartition is the local __share_group_state partition holding
// k's state; nil without error when another broker leads it.
func (b *Broker) shareStatePartition(k share.PartitionKey) (*partition.Partition, error) {
	idx, leader, err := b.shareStateLeader(k)
	if err != nil {
		return nil, err
	}
	if leader != b.Config.NodeID {
		return nil, nil
	}
	p, ok := b.partition(share.StateTopic, idx)
	if !ok {
		return nil, errShareStateUnavailable
	}
	if leader, _ := p.Leadership(); leader != b.Config.NodeID {
		return nil, errShareStateUnavailable
	}
	return p, nil
}

// loadShareState reads the last snapshot of k from its state partition;
// ok is false when there is none (or a tombstone ends it).
func (b *Broker) loadShareState(k share.PartitionKey) (share.Snapshot, bool, error) {
	p, err := b.shareStatePartition(k)
	if err != nil {
		return share.Snapshot{}, false, err
	}
	if p == nil {
		return b.loadRemoteShareState(k)
	}
	key := share.EncodeSnapshotKey(k)
	var last []byte
	found := false
	off := p.Offsets()
	for at := off.LogStartOffset; at < off.HighWatermark; {
		rr, err := p.Read(at, 1<<20, true)
		if err != nil {
			return share.Snapshot{}, false, fmt.Errorf("api: reading %s: %w", share.StateTopic, err)
		}
		if len(rr.Records) == 0 {
			break
		}
		for it := record.Batches(rr.Records); it.Next(); {
			h := it.Header()
			at = h.NextOffset()
			if h.IsControl() {
				continue
			}
			err := record.Records(it.Batch(), 16<<20, func(r record.Record) error {
				if bytes.Equal(r.Key, key) {
					last, found = r.Value, true
				}
				return nil
			})
			if err != nil {
				return share.Snapshot{}, false, fmt.Errorf("api: reading %s: %w", share.StateTopic, err)
			}
		}
	}
	if !found || last == nil {
		return share.Snapshot{}, false, nil
	}
	_, s, err := share.DecodeSnapshotValue(last)
	if err != nil {
		return share.Snapshot{}, false, err
	}
	return s, true, nil
}

// persistShare writes the current state of a share-partition (a tombstone
// when sp is nil) and waits until it is replicated.
func (b *Broker) persistShare(k share.PartitionKey, sp *share.Partition) error {
	p, err := b.shareStatePartition(k)
	if err != nil {
		return err
	}
	st := b.share()
	now := b.now().UnixMilli()
	st.persistMu.Lock()
	var value []byte
	if sp != nil {
		epoch := int32(-1)
		if p != nil {
			_, epoch = p.Leadership()
		}
		value = share.EncodeSnapshotValue(share.SnapshotMeta{LeaderEpoch: epoch, CreateTimestamp: now, WriteTimestamp: now}, sp.Snapshot())
	}
	batch, err := record.Encode(record.BatchSpec{FirstTimestamp: now, MaxTimestamp: now, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]record.Record{{Key: share.EncodeSnapshotKey(k), Value: value}})
	if err != nil {
		st.persistMu.Unlock()
		return fmt.Errorf("api: encoding share state: %w", err)
	}
	if p == nil {
		// The remote write stays under persistMu so that snapshots reach
		// the log in the order they were taken.
		defer st.persistMu.Unlock()
		return b.persistRemoteShareState(k, batch)
	}
	res, err := p.Append(batch)
	st.persistMu.Unlock()
	if err != nil {
		return fmt.Errorf("api: writing share state: %w", err)
	}
	ctx, cancel := b.ctx(0)
	defer cancel()
	if err := replication.WaitReplicated(ctx, p, res.LastOffset+1); err != nil {
		return fmt.Errorf("api: replicating share state: %w", err)
	}
	if b.Config.Log.Durability == config.DurabilityFsync {
		if err := p.Sync(); err != nil {
			return fmt.Errorf("api: fsync of share state: %w", err)
		}
	}
	return nil
}

// persistShareGroup writes the state of every share-partition of a group
// this broker holds (after a member's records were released); failures
// are logged, the records being available in memory either way.
func (b *Broker) persistShareGroup(groupID string) {
	st := b.share()
	for _, k := range st.parts.Group(groupID) {
		if sp := st.parts.Lookup(k); sp != nil {
			if err := b.persistShare(k, sp); err != nil {
				b.Logger.Warn("writing share state", "group", groupID, "err", err)
			}
		}
	}
}
