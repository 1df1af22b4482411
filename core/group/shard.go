package group

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
)

// shard is the coordinator of the groups of one __consumer_offsets
// partition led by this broker.
type shard struct {
	c        *Coordinator
	index    int32
	p        *partition.Partition
	epoch    int32
	loadedCh chan struct{} // closed when loading ends, loaded or not

	mu       sync.Mutex // guards everything below, and every group of the shard
	loaded   bool
	resigned bool
	groups   map[string]*group
	timerSeq uint64
	// txnPending holds uncommitted transactional offsets by producer id
	// (txn_offsets.go).
	txnPending map[int64]pendingTxn
	// lateMarkers are markers committed while the shard was loading.
	lateMarkers []lateMarker
}

func newShard(c *Coordinator, index int32, p *partition.Partition, epoch int32) *shard {
	return &shard{c: c, index: index, p: p, epoch: epoch, loadedCh: make(chan struct{}), groups: map[string]*group{}}
}

// usable says whether requests may be served; the caller holds mu.
func (s *shard) usable() error {
	switch {
	case s.resigned:
		return ErrNotCoordinator
	case !s.loaded:
		return ErrCoordinatorLoadInProgress
	}
	return nil
}

// resign drops the shard's state: members waiting for a join or sync answer
// are told NOT_COORDINATOR, and every timer stops.
func (s *shard) resign() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resigned {
		return
	}
	s.resigned = true
	s.txnPending = nil
	for _, g := range s.groups {
		g.shutdown()
	}
	s.groups = map[string]*group{}
}

// now is the coordinator clock's time.
func (s *shard) now() time.Time { return s.c.clock.Now() }

// group returns a group, or nil.
func (s *shard) group(id string) *group { return s.groups[id] }

// write appends records to the partition and waits until they are
// committed (replicate.go); the state may change only after it succeeded.
// The caller holds mu.
func (s *shard) write(recs []kv) error {
	if len(recs) == 0 {
		return nil
	}
	b, err := encodeBatches(s.now(), recs)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStorage, err)
	}
	return s.appendCommitted(b)
}

// Partition is the __consumer_offsets partition a group's writes go to, for
// callers that make them durable; nil when this broker does not lead it.
func (c *Coordinator) Partition(groupID string) *partition.Partition {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if s := c.shards[PartitionFor(groupID, c.numPartitions)]; s != nil {
		return s.p
	}
	return nil
}

// deadline is a replaceable timer whose callback runs under the shard's lock
// and only while it is still the current one.
type deadline struct {
	t  Timer
	id uint64
}

// schedule replaces d's timer with one calling f after wait; the caller
// holds mu.
func (s *shard) schedule(d *deadline, wait time.Duration, f func()) {
	d.stop()
	s.timerSeq++
	id := s.timerSeq
	d.id = id
	d.t = s.c.clock.AfterFunc(wait, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.resigned || d.id != id {
			return
		}
		d.t, d.id = nil, 0
		f()
	})
}

func (d *deadline) stop() {
	if d.t != nil {
		d.t.Stop()
	}
	d.t, d.id = nil, 0
}

func (d *deadline) active() bool { return d.id != 0 }

// maxLoadRecordBytes bounds what one decompressed batch of the partition may
// expand to while loading.
const maxLoadRecordBytes = 256 << 20

// loadState is what replaying a partition finds, before groups are built.
type loadState struct {
	offsets map[string]map[TopicPartition]Offset
	meta    map[string]*kmsg.GroupMetadataValue
	// consumer holds each consumer group's records as the log leaves them:
	// key -> value, tombstoned keys removed.
	consumer map[string]map[string][]byte
	// streams holds each streams group's records the same way.
	streams map[string]map[string][]byte
	order   []string // groups in order of first appearance
	seen    map[string]bool
	skipped int
	corrupt int
	pending map[int64]pendingTxn // transactional offsets awaiting their marker
}

func newLoadState() *loadState {
	return &loadState{offsets: map[string]map[TopicPartition]Offset{}, meta: map[string]*kmsg.GroupMetadataValue{},
		consumer: map[string]map[string][]byte{}, streams: map[string]map[string][]byte{}, seen: map[string]bool{}}
}

func (ls *loadState) note(group string) {
	if !ls.seen[group] {
		ls.seen[group] = true
		ls.order = append(ls.order, group)
	}
}

// apply replays one record into the state.
func (ls *loadState) apply(key, value []byte) error {
	k, err := decodeKey(key)
	if err != nil {
		return err
	}
	switch k.kind {
	case kindOffset:
		ls.note(k.group)
		if value == nil {
			delete(ls.offsets[k.group], k.tp)
			return nil
		}
		o, err := decodeOffsetValue(value)
		if err != nil {
			return fmt.Errorf("group %q %s-%d: %w", k.group, k.tp.Topic, k.tp.Partition, err)
		}
		if ls.offsets[k.group] == nil {
			ls.offsets[k.group] = map[TopicPartition]Offset{}
		}
		ls.offsets[k.group][k.tp] = o
	case kindGroup:
		ls.note(k.group)
		if value == nil {
			delete(ls.meta, k.group)
			return nil
		}
		v, err := decodeGroupValue(bytes.Clone(value))
		if err != nil {
			return fmt.Errorf("group %q: %w", k.group, err)
		}
		ls.meta[k.group] = v
	case kindConsumer:
		ls.note(k.group)
		if value == nil {
			delete(ls.consumer[k.group], string(key))
			return nil
		}
		if err := decodeConsumerValue(k.version, value); err != nil {
			return fmt.Errorf("group %q member %q: %w", k.group, k.member, err)
		}
		if ls.consumer[k.group] == nil {
			ls.consumer[k.group] = map[string][]byte{}
		}
		ls.consumer[k.group][string(key)] = bytes.Clone(value)
	case kindStreams:
		ls.note(k.group)
		if value == nil {
			delete(ls.streams[k.group], string(key))
			return nil
		}
		if err := decodeStreamsValue(k.version, value); err != nil {
			return fmt.Errorf("group %q member %q: %w", k.group, k.member, err)
		}
		if ls.streams[k.group] == nil {
			ls.streams[k.group] = map[string][]byte{}
		}
		ls.streams[k.group][string(key)] = bytes.Clone(value)
	default:
		ls.skipped++
	}
	return nil
}

// testHookLoadEnd, when set by a test, is called once a load knows the end
// it replays up to, before it replays.
var testHookLoadEnd func(partition int32, end int64)

// errLoadEnd stops a replay at the committed end.
var errLoadEnd = errors.New("group: end of committed records")

// replay reads the partition from its log start up to end.
func (s *shard) replay(end int64) (*loadState, error) {
	ls := newLoadState()
	l := s.p.Log()
	err := l.Scan(l.LogStartOffset(), func(h record.Header, batch []byte) error {
		if h.BaseOffset >= end {
			return errLoadEnd
		}
		if h.IsTransactional() {
			return ls.applyTxnBatch(h, batch)
		}
		return record.Records(batch, maxLoadRecordBytes, func(r record.Record) error {
			if err := ls.apply(r.Key, r.Value); err != nil {
				if !errors.Is(err, ErrCorrupt) {
					return err
				}
				ls.corrupt++
				s.c.log.Error("skipping a corrupt record while loading", "partition", s.index, "offset",
					h.BaseOffset+int64(r.OffsetDelta), "err", err)
			}
			return nil
		})
	})
	if err != nil && !errors.Is(err, errLoadEnd) {
		return nil, fmt.Errorf("group: load %s-%d: %w", OffsetsTopic, s.index, err)
	}
	return ls, nil
}

// load rebuilds the shard's groups from its partition. On failure the
// shard stays unloaded, and requests keep getting COORDINATOR_LOAD_IN_PROGRESS
// until leadership changes.
func (s *shard) load() {
	defer close(s.loadedCh)
	start := time.Now()
	end, ok := loadEnd(s.p, s.epoch, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.resigned
	})
	if !ok {
		return
	}
	if testHookLoadEnd != nil {
		testHookLoadEnd(s.index, end)
	}
	ls, err := s.replay(end)
	if err != nil {
		s.c.log.Error("cannot load group state", "partition", s.index, "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resigned {
		return
	}
	now := s.now()
	for _, id := range ls.order {
		offs, meta, consumer := ls.offsets[id], ls.meta[id], ls.consumer[id]
		g := newGroup(s, id)
		for tp, o := range offs {
			g.offsets[tp] = o
		}
		g.consumer = s.restoreConsumer(g, consumer, now)
		if g.consumer == nil {
			g.streams = s.restoreStreams(g, ls.streams[id], now)
		}
		if len(offs) == 0 && meta == nil && g.consumer == nil && g.streams == nil {
			continue
		}
		if g.consumer == nil && g.streams == nil {
			g.classic = restoreClassic(s, g, meta, now)
		}
		s.groups[id] = g
	}
	s.txnPending = ls.pending
	s.applyLateMarkersLocked(end)
	s.loaded = true
	s.c.log.Info("loaded group state", "partition", s.index, "groups", len(s.groups),
		"skipped_records", ls.skipped, "corrupt_records", ls.corrupt, "took", time.Since(start).Round(time.Millisecond))
}
