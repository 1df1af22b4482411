package partition

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/gregorbroker/gregor/core/log"
)

// Config is what a partition enforces on appends, derived from the broker and
// topic configs by the caller.
type Config struct {
	Log log.Config
	// MaxMessageBytes is the largest batch accepted (max.message.bytes).
	MaxMessageBytes int32
	// LogAppendTime stamps batches with the broker's clock
	// (message.timestamp.type=LogAppendTime).
	LogAppendTime bool
	// TimestampBeforeMaxMs and TimestampAfterMaxMs bound CreateTime
	// timestamps against the broker's clock; negative means unbounded.
	TimestampBeforeMaxMs int64
	TimestampAfterMaxMs  int64
	// MinInsyncReplicas is min.insync.replicas, checked for acks=all.
	MinInsyncReplicas int32
}

// Options carries what a partition needs from its surroundings.
type Options struct {
	Now    func() time.Time
	Logger *slog.Logger
	// NodeID is this broker's id. With Replicated set the partition leads
	// only when the leadership names NodeID and follows otherwise; without
	// it (a lone broker, tests) it acts as the leader of any leadership.
	NodeID     int32
	Replicated bool
}

// Partition is one replica of a topic partition hosted here.
type Partition struct {
	Topic      string
	Index      int32
	TopicID    [16]byte
	log        *log.Log
	now        func() time.Time
	logger     *slog.Logger
	nodeID     int32
	replicated bool
	snapDirty  bool

	mu          sync.Mutex // guards everything below, and serialises appends
	cfg         Config
	cfgGen      uint64 // counts SetConfig calls; a Checked names the one it was checked against
	leader      int32
	leaderEpoch int32
	replicas    []int32
	isr         []int32
	hw          int64
	producers   *producerState
	hwChanged   chan struct{} // closed and replaced whenever the high watermark, the log end or the ISR moves
	closed      bool

	// Replication state (replica.go, leader.go).
	partitionEpoch int32
	// epochStart is the log end offset when this broker became leader in
	// leaderEpoch; a follower joins the ISR only once past it.
	epochStart int64
	// followers is the leader's view of each other replica, reset when
	// this broker becomes leader.
	followers map[int32]*followerState
	// pendingISR is an ISR change sent to the controller and not yet seen
	// in metadata; while it is pending the high watermark counts the
	// replicas of both ISRs (Kafka's maximal ISR).
	pendingISR []int32

	traffic traffic // atomic counters; not guarded by mu
}

// New wraps an opened log as a partition, loading the producer state from the
// newest snapshot and replaying the log after it.
func New(l *log.Log, topicID [16]byte, cfg Config, opts Options) (*Partition, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	p := &Partition{
		Topic: l.Topic(), Index: l.Partition(), TopicID: topicID,
		log: l, now: opts.Now, logger: opts.Logger.With("topic", l.Topic(), "partition", l.Partition()),
		nodeID: opts.NodeID, replicated: opts.Replicated, cfg: cfg, leader: -1, hwChanged: make(chan struct{}),
		followers: map[int32]*followerState{},
	}
	if err := p.loadProducerState(); err != nil {
		return nil, err
	}
	p.hw = initialHighWatermark(l, opts.Replicated)
	l.SetHighWatermark(p.hw)
	return p, nil
}

// initialHighWatermark is where a partition's high watermark starts. A
// partition outside replication (a lone broker, tests) commits every append,
// so it is its log end offset. A replicated one starts where the
// replication-offset-checkpoint left it, bounded by the log (Kafka's
// min(checkpointed HW, LEO)): the log may hold records the ISR never
// confirmed, which must stay invisible until a leader's ISR confirms them
// again. Without a checkpointed value nothing past the log start is known
// committed.
func initialHighWatermark(l *log.Log, replicated bool) int64 {
	leo, start := l.LogEndOffset(), l.LogStartOffset()
	if !replicated {
		return leo
	}
	hw, ok := l.HighWatermark()
	if !ok {
		return start
	}
	return max(min(hw, leo), start)
}

// Log is the partition's log, for the retention and admin paths.
func (p *Partition) Log() *log.Log { return p.log }

// SetConfig replaces the append rules and the log config.
func (p *Partition) SetConfig(cfg Config) {
	p.mu.Lock()
	p.cfg = cfg
	p.cfgGen++
	if p.isLocal(p.leader) {
		// A lower min.insync.replicas may let the high watermark move.
		p.advanceHighWatermarkLocked(false)
	}
	p.mu.Unlock()
	p.log.SetConfig(cfg.Log)
}

// SetLeadership records who leads this partition and in which epoch.
func (p *Partition) SetLeadership(leader, epoch int32, replicas, isr []int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLeadershipLocked(leader, epoch, p.partitionEpoch, replicas, isr)
}

// SetLeadershipEpochs is SetLeadership with the partition epoch the
// controller gave the assignment, which ISR changes must quote.
func (p *Partition) SetLeadershipEpochs(leader, leaderEpoch, partitionEpoch int32, replicas, isr []int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLeadershipLocked(leader, leaderEpoch, partitionEpoch, replicas, isr)
}

func (p *Partition) setLeadershipLocked(leader, epoch, partitionEpoch int32, replicas, isr []int32) {
	if p.replicated && p.leader >= 0 && (epoch < p.leaderEpoch || epoch == p.leaderEpoch && partitionEpoch < p.partitionEpoch) {
		// An older state than one already applied (an ISR change's answer
		// can overtake the metadata image that carries it).
		return
	}
	local := p.isLocal(leader)
	newEpoch := leader >= 0 && epoch > p.leaderEpoch || p.leader < 0
	becameLeader := local && (newEpoch || p.leader != leader)
	if newEpoch && local {
		// A leader's new epoch starts at the log end offset (Kafka's leader
		// epoch cache entry on becoming leader); a follower learns where it
		// starts from the leader's batches.
		if err := p.log.AssignEpochStart(epoch); err != nil {
			p.logger.Error("cannot record leader epoch", "epoch", epoch, "err", err)
		}
	}
	if len(p.replicas) > 0 {
		p.traffic.isrChanged(p.isr, isr)
	}
	moved := leader != p.leader || epoch != p.leaderEpoch || partitionEpoch != p.partitionEpoch
	if moved {
		// The controller answered a pending ISR change, or moved on.
		p.pendingISR = nil
	}
	moved = moved || !slices.Equal(isr, p.isr)
	p.leader, p.leaderEpoch, p.partitionEpoch = leader, epoch, partitionEpoch
	p.replicas = append(p.replicas[:0], replicas...)
	p.isr = append(p.isr[:0], isr...)
	if becameLeader {
		p.resetFollowersLocked()
	} else if local {
		p.addFollowersLocked()
	}
	if local {
		// A smaller ISR may let the high watermark move.
		p.advanceHighWatermarkLocked(false)
	}
	if moved {
		// Producers waiting for acks=all re-check the ISR and leadership.
		p.notifyLocked()
	}
}

// isLocal reports whether leader is this broker.
func (p *Partition) isLocal(leader int32) bool {
	return leader >= 0 && (!p.replicated || leader == p.nodeID)
}

// Leadership returns the leader id and leader epoch.
func (p *Partition) Leadership() (leader, epoch int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leader, p.leaderEpoch
}

// CheckEpoch compares a client's current leader epoch with ours (-1 skips
// the check), as Kafka's Fetch and ListOffsets do.
func (p *Partition) CheckEpoch(current int32) error {
	if err := p.Offline(); err != nil {
		return err
	}
	if current < 0 {
		return nil
	}
	_, epoch := p.Leadership()
	switch {
	case current < epoch:
		return fmt.Errorf("%w: %d < %d", ErrFencedLeaderEpoch, current, epoch)
	case current > epoch:
		return fmt.Errorf("%w: %d > %d", ErrUnknownLeaderEpoch, current, epoch)
	}
	return nil
}

// Offline returns an ErrStorage error when the partition's log directory went
// offline after a write or fsync error (Kafka's offline partition, answered
// with KAFKA_STORAGE_ERROR), and nil otherwise.
func (p *Partition) Offline() error {
	if err := p.log.Offline(); err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return nil
}

// NotifyOffline wakes the fetch long polls and acks=all waiters of the
// partition after its log directory went offline, so that they answer
// KAFKA_STORAGE_ERROR now rather than at their timeout.
func (p *Partition) NotifyOffline() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.notifyLocked()
	}
}

// Offsets are a partition's offsets at one moment.
type Offsets struct {
	LogStartOffset   int64
	HighWatermark    int64
	LastStableOffset int64
	LogEndOffset     int64
}

// Offsets returns the current offsets.
func (p *Partition) Offsets() Offsets {
	p.mu.Lock()
	hw, lso := p.hw, p.lastStableLocked()
	p.mu.Unlock()
	return Offsets{
		LogStartOffset:   p.log.LogStartOffset(),
		HighWatermark:    hw,
		LastStableOffset: lso,
		LogEndOffset:     p.log.LogEndOffset(),
	}
}

// HighWatermarkChanged returns a channel closed at the next move of the high
// watermark, the log end offset or the leadership; fetch long polls and
// acks=all produces wait on it.
func (p *Partition) HighWatermarkChanged() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hwChanged
}

// AppendResult is the answer to a successful append.
type AppendResult struct {
	BaseOffset     int64
	LastOffset     int64
	LogAppendTime  int64 // -1 unless the topic uses LogAppendTime
	LogStartOffset int64
	// Duplicate is true when the batch repeated an idempotent batch already
	// in the log; the offsets are the original ones.
	Duplicate bool
}

// Append validates a produce request's records for this partition and
// appends them. The records stay the client's bytes: offsets, the leader epoch
// and, for LogAppendTime, the timestamp are patched in place.
func (p *Partition) Append(records []byte) (AppendResult, error) {
	return p.appendFrom(records, originClient)
}

func (p *Partition) appendFrom(records []byte, origin appendOrigin) (AppendResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.fenceLocked(AnyEpoch); err != nil {
		return AppendResult{}, err
	}
	return p.appendLocked(records, origin)
}

// appendLocked is Append once the leadership was checked; the caller holds mu.
// origin says whose write it is: a coordinator's write is checked by
// producer epoch only (Kafka's AppendOrigin.COORDINATOR).
func (p *Partition) appendLocked(records []byte, origin appendOrigin) (AppendResult, error) {
	c, err := p.check(records, p.cfg, nil, 0)
	if err != nil {
		return AppendResult{}, err
	}
	c.gen = p.cfgGen
	return p.appendCheckedLocked(c, origin)
}

// notifyLocked wakes fetch long polls and acks=all waiters.
func (p *Partition) notifyLocked() {
	close(p.hwChanged)
	p.hwChanged = make(chan struct{})
}

// maxDecompressed bounds what one produced batch may expand to. Validation
// streams through a fixed buffer, so the bound is on the CPU a batch costs,
// not on memory, and it does not scale with max.message.bytes.
func maxDecompressed(Config) int { return maxDecompressedBytes }

const maxDecompressedBytes = 1 << 30

// Sync makes everything appended so far durable (group commit in the log).
func (p *Partition) Sync() error {
	if err := p.log.Sync(); err != nil {
		return fmt.Errorf("%w: %v", ErrStorage, err)
	}
	return nil
}

// FlushRolled fsyncs the segments the log rolled since the last fsync and
// advances its recovery point to the active segment (see log.FlushRolled).
func (p *Partition) FlushRolled() error {
	if err := p.log.FlushRolled(); err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return nil
}

// FlushIfDue fsyncs the log when the topic's flush.ms says its oldest
// unflushed append is old enough at now, and reports whether it did.
func (p *Partition) FlushIfDue(now time.Time) (bool, error) {
	due, err := p.log.FlushIfDue(now)
	if err != nil {
		return due, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	return due, nil
}

// ReadResult is a fetch's view of a partition.
type ReadResult struct {
	Records []byte
	Offsets
	// Aborted lists the aborted transactions overlapping Records, for
	// read_committed reads.
	Aborted []log.AbortedTxn
}

// Read returns whole batches from offset up to the high watermark.
func (p *Partition) Read(offset int64, maxBytes int, minOneBatch bool) (ReadResult, error) {
	off := p.Offsets()
	res := ReadResult{Offsets: off}
	if err := p.Offline(); err != nil {
		return res, err
	}
	if offset < off.LogStartOffset || offset > off.LogEndOffset {
		return res, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, off.LogStartOffset, off.LogEndOffset)
	}
	if offset >= off.HighWatermark {
		return res, nil
	}
	b, err := p.log.Read(offset, maxBytes, off.HighWatermark, minOneBatch)
	if err != nil {
		if errors.Is(err, log.ErrOffsetOutOfRange) {
			return res, fmt.Errorf("%w: %v", ErrOffsetOutOfRange, err)
		}
		return res, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	res.Records = b
	p.traffic.bytesOut.Add(int64(len(b)))
	return res, nil
}

// Close writes a producer snapshot; the log itself is closed by its Dir.
func (p *Partition) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	close(p.hwChanged)
	p.hwChanged = make(chan struct{})
	return p.writeSnapshotLocked()
}

// Snapshot writes the producer state if it changed since the last snapshot.
func (p *Partition) Snapshot() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !p.snapDirty {
		return nil
	}
	return p.writeSnapshotLocked()
}
