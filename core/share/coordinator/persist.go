package coordinator

import (
	"fmt"
	"hash/fnv"

	"github.com/gregorbroker/gregor/core/share"
)

// A share-partition's state is written to its share coordinator before a
// change is answered: an acquisition (its delivery counts) before the
// records are sent, an acknowledgement before it is confirmed. The share
// coordinator is the leader of the __share_group_state partition the key
// hashes to; when that is this broker the Store is called directly,
// otherwise the same requests go to it over the inter-broker client
// (remote.go). Each write carries the whole in-flight state, which the
// coordinator merges like any WriteShareGroupState.

// stateLeader is the broker leading k's __share_group_state partition,
// creating the topic on first use.
func (c *Coordinator) stateLeader(k share.PartitionKey) (int32, error) {
	t, err := c.broker.EnsureInternalTopic(share.StateTopic, stateTopicPartitions, stateTopicRF, stateTopicConfigs)
	if err != nil {
		return -1, fmt.Errorf("%w: %w", ErrCoordinatorNotAvailable, err)
	}
	if len(t.Partitions) == 0 {
		return -1, ErrCoordinatorNotAvailable
	}
	idx := StateTopicPartition(k, int32(len(t.Partitions)))
	leader := t.Partitions[idx].Leader
	if leader < 0 {
		return -1, fmt.Errorf("%w: %s-%d has no leader", ErrCoordinatorNotAvailable, share.StateTopic, idx)
	}
	return leader, nil
}

// readState reads k's state for a share-partition leader in leaderEpoch
// (-1: no leader, fences nothing); ok is false when there is none.
func (c *Coordinator) readState(k share.PartitionKey, leaderEpoch int32) (share.Snapshot, int32, bool, error) {
	leader, err := c.stateLeader(k)
	if err != nil {
		return share.Snapshot{}, 0, false, err
	}
	var st State
	var ok bool
	if leader == c.cfg.NodeID {
		st, ok, err = c.Store.Read(k, leaderEpoch)
	} else {
		st, ok, err = c.remoteRead(leader, k, leaderEpoch)
	}
	if err != nil || !ok {
		return share.Snapshot{}, 0, false, err
	}
	return st.Snapshot(), st.StateEpoch, true, nil
}

func (c *Coordinator) writeLock(k share.PartitionKey) func() {
	h := fnv.New32a()
	h.Write([]byte(k.Group))
	h.Write(k.TopicID[:])
	mu := &c.writeMu[(h.Sum32()^uint32(k.Partition))%uint32(len(c.writeMu))]
	mu.Lock()
	return mu.Unlock
}

// persist writes the current state of a share-partition and waits until
// its share coordinator has it replicated.
func (c *Coordinator) persist(k share.PartitionKey, sp *share.Partition) error {
	unlock := c.writeLock(k)
	defer unlock()
	leader, err := c.stateLeader(k)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateWrite, err)
	}
	e := c.loaded(k)
	snap := sp.Snapshot()
	if leader == c.cfg.NodeID {
		err = c.Store.Write(k, e.state, e.leader, snap.StartOffset, snap.Batches)
	} else {
		err = c.remoteWrite(leader, k, e.state, e.leader, snap)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateWrite, err)
	}
	return nil
}

// initialize starts k's state again at startOffset in the next state
// epoch (AlterShareGroupOffsets), and the share-partition with it.
func (c *Coordinator) initialize(k share.PartitionKey, sp *share.Partition, startOffset int64) error {
	unlock := c.writeLock(k)
	defer unlock()
	leader, err := c.stateLeader(k)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateWrite, err)
	}
	e := c.loaded(k)
	next := e.state + 1
	if leader == c.cfg.NodeID {
		err = c.Store.Initialize(k, next, startOffset)
	} else {
		err = c.remoteInitialize(leader, k, next, startOffset)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateWrite, err)
	}
	sp.Reset(startOffset)
	c.epochMu.Lock()
	e.state = next
	c.epochs[k] = e
	c.epochMu.Unlock()
	return nil
}

// deleteState forgets k's durable state.
func (c *Coordinator) deleteState(k share.PartitionKey) error {
	unlock := c.writeLock(k)
	defer unlock()
	leader, err := c.stateLeader(k)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateWrite, err)
	}
	if leader == c.cfg.NodeID {
		err = c.Store.Delete(k)
	} else {
		err = c.remoteDelete(leader, k)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateWrite, err)
	}
	c.epochMu.Lock()
	delete(c.epochs, k)
	c.epochMu.Unlock()
	return nil
}

// PersistGroup writes the state of every share-partition of a group this
// broker holds (after a member's records were released); failures are
// logged, the records being available in memory either way.
func (c *Coordinator) PersistGroup(groupID string) {
	for _, k := range c.parts.Group(groupID) {
		if sp := c.parts.Lookup(k); sp != nil {
			if err := c.persist(k, sp); err != nil {
				c.log.Warn("writing share state", "group", groupID, "err", err)
			}
		}
	}
}
