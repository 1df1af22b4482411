package coordinator

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/share"
)

// Store is the share coordinator: it keeps the share-partition state of
// the __share_group_state partitions this broker leads, one record per
// change, each acknowledged only once the partition's ISR has it (and,
// with fsync durability, once it is on disk). As in Kafka, a
// share-partition's first write is a ShareSnapshot (its whole state) and
// the next ones are ShareUpdate records (the state batches written) until
// share_coordinator_snapshot_update_records_per_snapshot of them follow
// the snapshot; then the next write is a snapshot again, and the records
// below the oldest latest snapshot of the partition's share-partitions are
// deleted (the topic's cleanup.policy is delete with no retention, as
// Kafka creates it). A state topic created compacted (by an earlier
// Gregor) gets snapshots only: compaction would drop updates. Each state
// partition is read into memory when this broker starts leading it, and
// the requests on one partition run one at a time.
type Store struct {
	c *Coordinator

	mu    sync.Mutex // guards parts
	parts map[int32]*statePartition
}

type statePartition struct {
	// mu serialises the requests on the partition and guards the fields
	// below.
	mu sync.Mutex
	// epoch is the leader epoch the states were read in; -1 when they
	// must be read again.
	epoch  int32
	states map[share.PartitionKey]State
	// updates counts the ShareUpdate records of each share-partition since
	// its last ShareSnapshot; snapshotAt is where that snapshot is (at
	// most its offset), the records below the smallest of which no state
	// needs.
	updates    map[share.PartitionKey]int
	snapshotAt map[share.PartitionKey]int64
	// leaderEpochs are the share-partition leader epochs reads announced.
	leaderEpochs map[share.PartitionKey]int32
}

func newStore(c *Coordinator) *Store {
	return &Store{c: c, parts: map[int32]*statePartition{}}
}

// Kafka's defaults for the state topic (share.coordinator.state.topic.*).
const (
	stateTopicPartitions = 50
	stateTopicRF         = 3
	stateSegmentBytes    = 100 << 20
)

// StateTopicPartition is the __share_group_state partition that holds a
// share-partition's state among n, as Kafka's share coordinator places
// it: the Java hash of its coordinator key ("group:topicId:partition",
// the topic id in Kafka's base64 form) modulo n.
func StateTopicPartition(k share.PartitionKey, n int32) int32 {
	return group.PartitionFor(CoordinatorKey(k), n)
}

// stateTopicConfigs are the configs __share_group_state is created with,
// Kafka's: the share coordinator deletes the records no state needs, so
// the topic is neither compacted nor retention-limited.
func stateTopicConfigs(rf int16) map[string]string {
	return map[string]string{
		"cleanup.policy":      "delete",
		"retention.ms":        "-1",
		"segment.bytes":       strconv.Itoa(stateSegmentBytes),
		"compression.type":    "producer",
		"min.insync.replicas": strconv.Itoa(int(min(rf, 2))),
	}
}

func validKey(k share.PartitionKey) error {
	switch {
	case k.Group == "":
		return fmt.Errorf("%w: empty group id", ErrInvalidRequest)
	case k.TopicID == [16]byte{}:
		return fmt.Errorf("%w: null topic id", ErrInvalidRequest)
	case k.Partition < 0:
		return fmt.Errorf("%w: negative partition %d", ErrInvalidRequest, k.Partition)
	}
	return nil
}

// with runs fn on the state partition of k, read into memory, under its
// lock.
func (s *Store) with(k share.PartitionKey, fn func(sp *statePartition, p *partition.Partition, epoch int32) error) error {
	if err := validKey(k); err != nil {
		return err
	}
	t, ok := s.c.broker.Image().Topic(share.StateTopic)
	if !ok || len(t.Partitions) == 0 {
		return ErrCoordinatorNotAvailable
	}
	idx := StateTopicPartition(k, int32(len(t.Partitions)))
	if t.Partitions[idx].Leader != s.c.cfg.NodeID {
		return fmt.Errorf("%w: %s-%d is led by %d", ErrNotCoordinator, share.StateTopic, idx, t.Partitions[idx].Leader)
	}
	p, ok := s.c.broker.Partition(share.StateTopic, idx)
	if !ok {
		return fmt.Errorf("%w: %s-%d is not open here", ErrCoordinatorLoadInProgress, share.StateTopic, idx)
	}
	leader, epoch := p.Leadership()
	if leader != s.c.cfg.NodeID {
		return fmt.Errorf("%w: %s-%d is led by %d", ErrNotCoordinator, share.StateTopic, idx, leader)
	}
	s.mu.Lock()
	sp := s.parts[idx]
	if sp == nil {
		sp = &statePartition{epoch: -1}
		s.parts[idx] = sp
	}
	s.mu.Unlock()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.epoch != epoch {
		if err := sp.load(p); err != nil {
			return err
		}
		sp.leaderEpochs, sp.epoch = map[share.PartitionKey]int32{}, epoch
	}
	return fn(sp, p, epoch)
}

// load reads every share-partition's state from a state partition, each
// ShareSnapshot with the ShareUpdate records after it applied as Kafka's
// share coordinator replays them; its records must all be committed.
func (sp *statePartition) load(p *partition.Partition) error {
	off := p.Offsets()
	if off.HighWatermark < off.LogEndOffset {
		return fmt.Errorf("%w: %s-%d committed up to %d of %d", ErrCoordinatorLoadInProgress, p.Topic, p.Index, off.HighWatermark, off.LogEndOffset)
	}
	states := map[share.PartitionKey]State{}
	updates, snapshotAt := map[share.PartitionKey]int{}, map[share.PartitionKey]int64{}
	for at := off.LogStartOffset; at < off.HighWatermark; {
		rr, err := p.Read(at, 1<<20, true)
		if err != nil {
			return fmt.Errorf("%w: reading %s-%d: %w", ErrCoordinatorLoadInProgress, p.Topic, p.Index, err)
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
				k, update, ok, err := share.DecodeStateKey(r.Key)
				if err != nil || !ok {
					return err
				}
				switch {
				case r.Value == nil:
					delete(states, k)
					delete(updates, k)
					delete(snapshotAt, k)
				case update:
					m, u, err := share.DecodeUpdateValue(r.Value)
					if err != nil {
						return err
					}
					cur, ok := states[k]
					states[k] = applyUpdate(cur, ok, m, u, r.Timestamp(h))
					updates[k]++
				default:
					m, snap, err := share.DecodeSnapshotValue(r.Value)
					if err != nil {
						return err
					}
					states[k] = State{SnapshotEpoch: m.SnapshotEpoch, StateEpoch: m.StateEpoch, LeaderEpoch: m.LeaderEpoch,
						StartOffset: snap.StartOffset, CreateTimestamp: m.CreateTimestamp, WriteTimestamp: m.WriteTimestamp, Batches: snap.Batches}
					updates[k], snapshotAt[k] = 0, h.BaseOffset+int64(r.OffsetDelta)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("coordinator: reading %s-%d: %w", p.Topic, p.Index, err)
			}
		}
	}
	sp.states, sp.updates, sp.snapshotAt = states, updates, snapshotAt
	return nil
}

// applyUpdate is a ShareUpdate written at writeTime replayed onto the
// state so far (ok false: none): its batches merged as a write merges
// them, the state epoch unchanged. An update with no snapshot before it
// is the state, as Kafka replays it.
func applyUpdate(cur State, ok bool, m share.UpdateMeta, u share.Snapshot, writeTime int64) State {
	if !ok {
		cur = State{SnapshotEpoch: m.SnapshotEpoch, LeaderEpoch: m.LeaderEpoch, StartOffset: max(u.StartOffset, 0), CreateTimestamp: writeTime}
	}
	next := merge(cur, u.StartOffset, m.LeaderEpoch, -1, u.Batches)
	next.WriteTimestamp = writeTime
	return next
}

// knownPartition checks that the share-partition's topic partition exists.
func (s *Store) knownPartition(k share.PartitionKey) error {
	t, ok := s.c.broker.Image().TopicsByID[uuid.UUID(k.TopicID)]
	if !ok || int(k.Partition) >= len(t.Partitions) {
		return fmt.Errorf("%w: %s-%d", ErrUnknownTopicOrPartition, uuid.UUID(k.TopicID), k.Partition)
	}
	return nil
}

// withUpdates reports whether the state topic takes ShareUpdate records:
// not when it is compacted, which would keep only the last of them.
func (s *Store) withUpdates() bool {
	policy := s.c.broker.Image().Configs[controller.ConfigResource{Type: controller.ResourceTopic, Name: share.StateTopic}]["cleanup.policy"]
	return !strings.Contains(policy, "compact")
}

// append writes k's state as a ShareSnapshot (a tombstone for both of k's
// record types when st is nil) at now and waits until it is committed.
func (s *Store) append(sp *statePartition, p *partition.Partition, epoch int32, k share.PartitionKey, st *State, now int64) error {
	recs := []record.Record{{Key: share.EncodeSnapshotKey(k)}}
	if st != nil {
		recs[0].Value = share.EncodeSnapshotValue(share.SnapshotMeta{SnapshotEpoch: st.SnapshotEpoch, StateEpoch: st.StateEpoch,
			LeaderEpoch: st.LeaderEpoch, CreateTimestamp: st.CreateTimestamp, WriteTimestamp: st.WriteTimestamp}, st.Snapshot())
	} else {
		recs = append(recs, record.Record{Key: share.EncodeUpdateKey(k)})
	}
	at, err := s.appendRecords(sp, p, epoch, recs, now)
	if err != nil {
		return err
	}
	if st == nil {
		delete(sp.states, k)
		delete(sp.updates, k)
		delete(sp.snapshotAt, k)
	} else {
		sp.states[k], sp.updates[k], sp.snapshotAt[k] = *st, 0, at
	}
	s.prune(sp, p)
	return nil
}

// appendUpdate writes a ShareUpdate of k at now and, once it is
// committed, makes next k's state.
func (s *Store) appendUpdate(sp *statePartition, p *partition.Partition, epoch int32, k share.PartitionKey, m share.UpdateMeta, u share.Snapshot, next State, now int64) error {
	recs := []record.Record{{Key: share.EncodeUpdateKey(k), Value: share.EncodeUpdateValue(m, u)}}
	if _, err := s.appendRecords(sp, p, epoch, recs, now); err != nil {
		return err
	}
	sp.states[k] = next
	sp.updates[k]++
	return nil
}

// appendRecords writes records in one batch at now and waits until they
// are committed; at is at most the offset of the first. A failure leaves
// the partition to be read again, since the records may still reach the
// log.
func (s *Store) appendRecords(sp *statePartition, p *partition.Partition, epoch int32, recs []record.Record, now int64) (at int64, err error) {
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
	}
	batch, err := record.Encode(record.BatchSpec{FirstTimestamp: now, MaxTimestamp: now, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		return 0, fmt.Errorf("coordinator: encoding share state: %w", err)
	}
	at = p.Offsets().LogEndOffset
	if err := p.AppendCoordinatorCommitted(epoch, batch, s.c.cfg.Fsync, s.c.cfg.WriteTimeout); err != nil {
		sp.epoch = -1
		if errors.Is(err, partition.ErrNotLeader) || errors.Is(err, partition.ErrFencedLeaderEpoch) || errors.Is(err, partition.ErrClosed) {
			return 0, fmt.Errorf("%w: %w", ErrNotCoordinator, err)
		}
		return 0, fmt.Errorf("%w: writing %s-%d: %w", ErrCoordinatorNotAvailable, p.Topic, p.Index, err)
	}
	return at, nil
}

// prune deletes the records of a state partition below the oldest of its
// share-partitions' last snapshots: no state needs them (Kafka's share
// coordinator prunes the same way). Nothing goes from a compacted topic.
func (s *Store) prune(sp *statePartition, p *partition.Partition) {
	if !s.withUpdates() {
		return
	}
	below := p.Offsets().HighWatermark
	for k := range sp.states {
		at, ok := sp.snapshotAt[k]
		if !ok {
			return
		}
		below = min(below, at)
	}
	if below <= p.Log().LogStartOffset() {
		return
	}
	if err := p.Log().DeleteRecordsBefore(below); err != nil {
		s.c.log.Warn("pruning share state", "partition", p.Index, "offset", below, "err", err)
	}
}

// Read is ReadShareGroupState: k's state (ok false when there is none), for
// a share-partition leader in leaderEpoch, which fences older leaders.
func (s *Store) Read(k share.PartitionKey, leaderEpoch int32) (st State, ok bool, err error) {
	err = s.with(k, func(sp *statePartition, _ *partition.Partition, _ int32) error {
		if err := s.fenced(sp, k, leaderEpoch); err != nil {
			return err
		}
		if err := s.knownPartition(k); err != nil {
			return err
		}
		if leaderEpoch > sp.leaderEpochs[k] {
			sp.leaderEpochs[k] = leaderEpoch
		}
		st, ok = sp.states[k]
		return nil
	})
	return st, ok, err
}

// Summary is ReadShareGroupStateSummary: k's state without its batches;
// it fences like Read and announces nothing.
func (s *Store) Summary(k share.PartitionKey, leaderEpoch int32) (st State, ok bool, err error) {
	err = s.with(k, func(sp *statePartition, _ *partition.Partition, _ int32) error {
		if err := s.fenced(sp, k, leaderEpoch); err != nil {
			return err
		}
		if err := s.knownPartition(k); err != nil {
			return err
		}
		st, ok = sp.states[k]
		return nil
	})
	return st, ok, err
}

func (s *Store) fenced(sp *statePartition, k share.PartitionKey, leaderEpoch int32) error {
	seen, ok := sp.leaderEpochs[k]
	if st, has := sp.states[k]; has && (!ok || st.LeaderEpoch > seen) {
		seen, ok = st.LeaderEpoch, true
	}
	if ok && leaderEpoch != -1 && seen > leaderEpoch {
		return fmt.Errorf("%w: %d is older than %d", ErrFencedLeaderEpoch, leaderEpoch, seen)
	}
	return nil
}

// Write is WriteShareGroupState: the state batches are merged into k's
// state, as Kafka's share coordinator merges them.
func (s *Store) Write(k share.PartitionKey, stateEpoch, leaderEpoch int32, startOffset int64, batches []share.StateBatch) error {
	for _, b := range batches {
		if b.LastOffset < b.FirstOffset {
			return fmt.Errorf("%w: state batch [%d, %d]", ErrInvalidRequest, b.FirstOffset, b.LastOffset)
		}
	}
	return s.with(k, func(sp *statePartition, p *partition.Partition, epoch int32) error {
		if err := s.fenced(sp, k, leaderEpoch); err != nil {
			return err
		}
		cur, ok := sp.states[k]
		if ok && cur.StateEpoch > stateEpoch {
			return fmt.Errorf("%w: %d is older than %d", ErrFencedStateEpoch, stateEpoch, cur.StateEpoch)
		}
		if err := s.knownPartition(k); err != nil {
			return err
		}
		now := s.c.Now().UnixMilli()
		if !ok {
			cur = State{StateEpoch: stateEpoch, LeaderEpoch: leaderEpoch, StartOffset: startOffset, CreateTimestamp: now}
		}
		next := merge(cur, startOffset, leaderEpoch, stateEpoch, batches)
		next.WriteTimestamp = now
		// A ShareUpdate carries no state epoch: a write in a new one is a
		// snapshot.
		if ok && sp.updates[k] < int(s.c.cfg.Groups.ShareCoordinatorSnapshotUpdateRecordsPerSnapshot) &&
			(stateEpoch == -1 || stateEpoch == cur.StateEpoch) && s.withUpdates() {
			written := merge(State{StartOffset: cur.StartOffset}, startOffset, -1, -1, batches).Batches
			return s.appendUpdate(sp, p, epoch, k, share.UpdateMeta{SnapshotEpoch: cur.SnapshotEpoch, LeaderEpoch: leaderEpoch},
				share.Snapshot{StartOffset: startOffset, Batches: written}, next, now)
		}
		if ok {
			next.SnapshotEpoch = cur.SnapshotEpoch + 1
		}
		return s.append(sp, p, epoch, k, &next, now)
	})
}

// Initialize is InitializeShareGroupState: k's state starts again at
// startOffset in stateEpoch, with nothing in flight.
func (s *Store) Initialize(k share.PartitionKey, stateEpoch int32, startOffset int64) error {
	return s.with(k, func(sp *statePartition, p *partition.Partition, epoch int32) error {
		cur, ok := sp.states[k]
		if ok && cur.StateEpoch > stateEpoch {
			return fmt.Errorf("%w: %d is older than %d", ErrFencedStateEpoch, stateEpoch, cur.StateEpoch)
		}
		if err := s.knownPartition(k); err != nil {
			return err
		}
		now := s.c.Now().UnixMilli()
		next := State{StateEpoch: stateEpoch, LeaderEpoch: -1, StartOffset: startOffset, CreateTimestamp: now, WriteTimestamp: now}
		if ok {
			next.LeaderEpoch, next.SnapshotEpoch = cur.LeaderEpoch, cur.SnapshotEpoch+1
		}
		return s.append(sp, p, epoch, k, &next, now)
	})
}

// Delete is DeleteShareGroupState: k's state is forgotten (a tombstone).
func (s *Store) Delete(k share.PartitionKey) error {
	return s.with(k, func(sp *statePartition, p *partition.Partition, epoch int32) error {
		if _, ok := sp.states[k]; !ok {
			return nil
		}
		delete(sp.leaderEpochs, k)
		return s.append(sp, p, epoch, k, nil, s.c.Now().UnixMilli())
	})
}
