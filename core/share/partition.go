package share

import (
	"fmt"
	"sync"
	"time"
)

// RecordState is the delivery state of an in-flight record, with Kafka's
// numbering (RecordState in the share coordinator's records).
type RecordState int8

// Kafka's record states.
const (
	Available    RecordState = 0
	Acquired     RecordState = 1
	Acknowledged RecordState = 2
	Archived     RecordState = 4
)

func (s RecordState) String() string {
	switch s {
	case Available:
		return "Available"
	case Acquired:
		return "Acquired"
	case Acknowledged:
		return "Acknowledged"
	case Archived:
		return "Archived"
	}
	return fmt.Sprintf("RecordState(%d)", int8(s))
}

// AckType is an acknowledgement type of ShareFetch and ShareAcknowledge,
// with Kafka's numbering.
type AckType int8

// Kafka's acknowledgement types; Renew is KIP-1222 (ShareFetch and
// ShareAcknowledge v2).
const (
	AckGap     AckType = 0
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
	AckRenew   AckType = 4
)

// PartitionConfig is what a share-partition enforces. Kafka's broker
// settings group.share.record.lock.duration.ms (30 s),
// group.share.delivery.count.limit (5) and
// group.share.partition.max.record.locks (2000) fill it; the group-level
// share.record.lock.duration.ms and share.delivery.count.limit override the
// first two.
type PartitionConfig struct {
	RecordLockDuration time.Duration
	DeliveryCountLimit int
	// MaxRecordLocks bounds the in-flight window (end - start) of the
	// share-partition: no new record is acquired while it is full, as
	// Kafka's SharePartition does.
	MaxRecordLocks int
}

// BatchInfo is what the share-partition needs of a batch read from the
// log: its offsets and transactional facts.
type BatchInfo struct {
	FirstOffset   int64
	LastOffset    int64
	ProducerID    int64
	Transactional bool
	Control       bool
}

// AbortedTxn is an aborted transaction overlapping a read: records of the
// producer from FirstOffset up to its abort marker at LastOffset.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
}

// AcquiredRange is a run of records acquired together with one delivery
// count (ShareFetch's AcquiredRecords).
type AcquiredRange struct {
	FirstOffset   int64
	LastOffset    int64
	DeliveryCount int16
}

// AcquireOptions limit one acquisition.
type AcquireOptions struct {
	// MaxRecords bounds the records acquired; 0 means no bound. In batch
	// mode the bound is rounded up to the end of the batch that reaches it,
	// as Kafka's batch-optimized acquire mode does.
	MaxRecords int
	// Strict is ShareFetch v2's record-limit acquire mode: never more than
	// MaxRecords, even in the middle of a batch.
	Strict bool
	// ReadCommitted archives the records of aborted transactions instead
	// of delivering them (share.isolation.level=read_committed).
	ReadCommitted bool
	Aborted       []AbortedTxn
}

// StateBatch is a run of records with one persisted state, the unit of
// Kafka's ShareSnapshot and ShareUpdate records. Acquired records are
// persisted as Available: a lock does not survive the share-partition.
type StateBatch struct {
	FirstOffset   int64
	LastOffset    int64
	State         RecordState
	DeliveryCount int16
}

// Snapshot is the durable state of a share-partition.
type Snapshot struct {
	StartOffset int64
	Batches     []StateBatch
}

type inflight struct {
	state      RecordState
	deliveries int16
	member     string
	deadline   time.Time
}

// Partition is the state of one share-partition: one share group's view
// of one topic partition.
type Partition struct {
	mu  sync.Mutex // guards everything below
	cfg PartitionConfig
	now func() time.Time
	// start is the share-partition start offset: every record below it is
	// acknowledged or archived. records[i] is offset start+i; start +
	// len(records) is the end offset, the next offset never fetched.
	start   int64
	records []inflight
	// acquired counts records in state Acquired.
	acquired int
	// timedOut counts acquisition locks that expired.
	timedOut int64
	// archivedTotal counts records archived (rejected, over the delivery
	// limit, aborted or control records).
	archivedTotal int64
}

// NewPartition returns a share-partition starting at start with nothing
// in flight. now is the clock locks are timed on.
func NewPartition(cfg PartitionConfig, now func() time.Time, start int64) *Partition {
	if now == nil {
		now = time.Now
	}
	if cfg.DeliveryCountLimit <= 0 {
		cfg.DeliveryCountLimit = 5
	}
	if cfg.RecordLockDuration <= 0 {
		cfg.RecordLockDuration = 30 * time.Second
	}
	if cfg.MaxRecordLocks <= 0 {
		cfg.MaxRecordLocks = 2000
	}
	return &Partition{cfg: cfg, now: now, start: start}
}

// Restore returns a share-partition in the state of a snapshot; every
// record not acknowledged or archived is Available with its delivery count.
func Restore(cfg PartitionConfig, now func() time.Time, s Snapshot) *Partition {
	p := NewPartition(cfg, now, s.StartOffset)
	for _, b := range s.Batches {
		for o := b.FirstOffset; o <= b.LastOffset; o++ {
			if o < p.start {
				continue
			}
			for p.end() < o { // a gap in the snapshot: never delivered
				p.records = append(p.records, inflight{state: Available})
			}
			st := b.State
			if st == Acquired {
				st = Available
			}
			if o == p.end() {
				p.records = append(p.records, inflight{state: st, deliveries: b.DeliveryCount})
			}
		}
	}
	p.advance()
	return p
}

// SetConfig changes the lock duration and limits for later acquisitions.
func (p *Partition) SetConfig(cfg PartitionConfig) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cfg.DeliveryCountLimit > 0 {
		p.cfg.DeliveryCountLimit = cfg.DeliveryCountLimit
	}
	if cfg.RecordLockDuration > 0 {
		p.cfg.RecordLockDuration = cfg.RecordLockDuration
	}
	if cfg.MaxRecordLocks > 0 {
		p.cfg.MaxRecordLocks = cfg.MaxRecordLocks
	}
}

// LockDuration is the acquisition lock duration in force.
func (p *Partition) LockDuration() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.RecordLockDuration
}

func (p *Partition) end() int64 { return p.start + int64(len(p.records)) }

// Offsets returns the share-partition start and end offsets.
func (p *Partition) Offsets() (start, end int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	return p.start, p.end()
}

// FetchOffset is where the next read from the log should start: the first
// Available in-flight record, or the end offset. ok is false when nothing
// can be acquired now (the in-flight window is full and nothing in it is
// Available).
func (p *Partition) FetchOffset() (offset int64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	for i := range p.records {
		if p.records[i].state == Available {
			return p.start + int64(i), true
		}
	}
	return p.end(), len(p.records) < p.cfg.MaxRecordLocks
}

// Acquire acquires for member the acquirable records of batches, read
// from the log at FetchOffset, and returns them as ranges. Records
// already in flight are acquired only when Available (a redelivery, its
// delivery count incremented); records past the end offset join the
// window while it has room. Control records and, for read_committed,
// records of aborted transactions are archived, never delivered.
func (p *Partition) Acquire(member string, batches []BatchInfo, opts AcquireOptions) []AcquiredRange {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.expireLocked()
	var out []AcquiredRange
	n := 0
	full := func() bool { return opts.MaxRecords > 0 && n >= opts.MaxRecords }
	take := func(o int64) {
		r := &p.records[o-p.start]
		r.state, r.member, r.deadline = Acquired, member, now.Add(p.cfg.RecordLockDuration)
		r.deliveries++
		p.acquired++
		n++
		if k := len(out) - 1; k >= 0 && out[k].LastOffset == o-1 && out[k].DeliveryCount == r.deliveries {
			out[k].LastOffset = o
			return
		}
		out = append(out, AcquiredRange{FirstOffset: o, LastOffset: o, DeliveryCount: r.deliveries})
	}
	for _, b := range batches {
		if full() {
			break
		}
		skip := b.Control || (opts.ReadCommitted && b.Transactional && aborted(b, opts.Aborted))
		for o := max(b.FirstOffset, p.start); o <= b.LastOffset; o++ {
			if opts.Strict && full() {
				break
			}
			if o >= p.end() {
				if len(p.records) >= p.cfg.MaxRecordLocks {
					break
				}
				// Offsets missing from the log (compacted away) are never
				// delivered.
				for p.end() < o {
					p.records = append(p.records, inflight{state: Archived})
				}
				p.records = append(p.records, inflight{state: Available})
			}
			r := &p.records[o-p.start]
			if r.state != Available {
				continue
			}
			if skip {
				r.state = Archived
				p.archivedTotal++
				continue
			}
			take(o)
		}
	}
	p.advance()
	return out
}

func aborted(b BatchInfo, txns []AbortedTxn) bool {
	for _, t := range txns {
		if t.ProducerID == b.ProducerID && t.FirstOffset <= b.FirstOffset && b.FirstOffset <= t.LastOffset {
			return true
		}
	}
	return false
}

// Acknowledge applies acknowledgements of member to the records first to
// last: one type for all of them, or one per offset. Every record must be
// Acquired by member, or nothing changes and ErrInvalidRecordState is
// returned. Renew extends the lock instead of ending it.
func (p *Partition) Acknowledge(member string, first, last int64, types []AckType) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	if last < first || (len(types) != 1 && int64(len(types)) != last-first+1) {
		return fmt.Errorf("%w: acknowledgement of [%d, %d] with %d types", ErrInvalidRequest, first, last, len(types))
	}
	for _, t := range types {
		if t < AckGap || t > AckRenew {
			return fmt.Errorf("%w: acknowledge type %d", ErrInvalidRequest, t)
		}
	}
	if first < p.start || last >= p.end() {
		return fmt.Errorf("%w: [%d, %d] outside the in-flight records [%d, %d)", ErrInvalidRecordState, first, last, p.start, p.end())
	}
	for o := first; o <= last; o++ {
		if r := p.records[o-p.start]; r.state != Acquired || r.member != member {
			return fmt.Errorf("%w: offset %d is %v", ErrInvalidRecordState, o, r.state)
		}
	}
	now := p.now()
	for o := first; o <= last; o++ {
		t := types[0]
		if len(types) > 1 {
			t = types[o-first]
		}
		r := &p.records[o-p.start]
		switch t {
		case AckAccept:
			p.settle(r, Acknowledged)
		case AckGap, AckReject:
			p.settle(r, Archived)
		case AckRelease:
			p.release(r)
		case AckRenew:
			r.deadline = now.Add(p.cfg.RecordLockDuration)
		}
	}
	p.advance()
	return nil
}

// ReleaseMember makes every record member holds Available again (or
// Archived at the delivery limit): its share session closed or it left
// the group.
func (p *Partition) ReleaseMember(member string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for i := range p.records {
		if r := &p.records[i]; r.state == Acquired && r.member == member {
			p.release(r)
			n++
		}
	}
	p.advance()
	return n
}

// Unacquire takes back an acquisition whose records never reached member
// (their state could not be made durable): each record of ranges still
// Acquired by member is Available again with the delivery count it had
// before, since no delivery happened.
func (p *Partition) Unacquire(member string, ranges []AcquiredRange) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range ranges {
		for o := max(a.FirstOffset, p.start); o <= a.LastOffset && o < p.end(); o++ {
			r := &p.records[o-p.start]
			if r.state != Acquired || r.member != member {
				continue
			}
			p.acquired--
			r.state, r.member, r.deadline = Available, "", time.Time{}
			if r.deliveries > 0 {
				r.deliveries--
			}
		}
	}
}

// NextLockDeadline is the earliest acquisition lock deadline, for a
// waiter that must wake when a record becomes Available again.
func (p *Partition) NextLockDeadline() (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var t time.Time
	for i := range p.records {
		if r := p.records[i]; r.state == Acquired && (t.IsZero() || r.deadline.Before(t)) {
			t = r.deadline
		}
	}
	return t, !t.IsZero()
}

// Reset moves the start offset to start and forgets every in-flight
// record (AlterShareGroupOffsets, an out-of-range start).
func (p *Partition) Reset(start int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start, p.records, p.acquired = start, nil, 0
}

// Snapshot returns the durable state: the start offset and the in-flight
// records as runs of one state and delivery count.
func (p *Partition) Snapshot() Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	s := Snapshot{StartOffset: p.start}
	for i, r := range p.records {
		o := p.start + int64(i)
		st := r.state
		if st == Acquired {
			st = Available
		}
		if k := len(s.Batches) - 1; k >= 0 && s.Batches[k].LastOffset == o-1 &&
			s.Batches[k].State == st && s.Batches[k].DeliveryCount == r.deliveries {
			s.Batches[k].LastOffset = o
			continue
		}
		s.Batches = append(s.Batches, StateBatch{FirstOffset: o, LastOffset: o, State: st, DeliveryCount: r.deliveries})
	}
	return s
}

// Stats are counters of a share-partition for metrics.
type Stats struct {
	InFlight     int   // records between the start and end offsets
	Acquired     int   // records under an acquisition lock now
	LockTimeouts int64 // acquisition locks that expired, ever
	Archived     int64 // records archived, ever
}

// Stats returns the partition's counters.
func (p *Partition) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	return Stats{InFlight: len(p.records), Acquired: p.acquired, LockTimeouts: p.timedOut, Archived: p.archivedTotal}
}

// State returns the state and delivery count of one offset, for tests and
// describes; ok is false outside the in-flight window.
func (p *Partition) State(offset int64) (state RecordState, deliveries int16, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	if offset < p.start {
		return Acknowledged, 0, false
	}
	if offset >= p.end() {
		return Available, 0, false
	}
	r := p.records[offset-p.start]
	return r.state, r.deliveries, true
}

func (p *Partition) expireLocked() {
	if p.acquired == 0 {
		return
	}
	now := p.now()
	for i := range p.records {
		if r := &p.records[i]; r.state == Acquired && !now.Before(r.deadline) {
			p.release(r)
			p.timedOut++
		}
	}
	p.advance()
}

// release ends an acquisition without an acknowledgement: the record is
// Available for another delivery, or Archived once it has been delivered
// group.share.delivery.count.limit times.
func (p *Partition) release(r *inflight) {
	if int(r.deliveries) >= p.cfg.DeliveryCountLimit {
		p.settle(r, Archived)
		return
	}
	p.acquired--
	r.state, r.member, r.deadline = Available, "", time.Time{}
}

func (p *Partition) settle(r *inflight, st RecordState) {
	if r.state == Acquired {
		p.acquired--
	}
	if st == Archived {
		p.archivedTotal++
	}
	r.state, r.member, r.deadline = st, "", time.Time{}
}

// advance moves the start offset past the settled records at the front.
func (p *Partition) advance() {
	i := 0
	for i < len(p.records) && (p.records[i].state == Acknowledged || p.records[i].state == Archived) {
		i++
	}
	if i == 0 {
		return
	}
	p.start += int64(i)
	p.records = append(p.records[:0:0], p.records[i:]...)
}

// Lag is the share-partition lag (KIP-1226): the records between the start
// offset and the high watermark that are not yet acknowledged or archived.
func (p *Partition) Lag(highWatermark int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	if highWatermark < p.start {
		return 0
	}
	lag := highWatermark - p.start
	for i, r := range p.records {
		if p.start+int64(i) >= highWatermark {
			break
		}
		if r.state == Acknowledged || r.state == Archived {
			lag--
		}
	}
	return lag
}
