package replication

import (
	"math"
	"sync"
	"time"
)

// Unthrottled is the limit of a quota that never holds anything back
// (Kafka's Long.MAX_VALUE default of the throttle rates).
const Unthrottled = math.MaxInt64

// ThrottledPartitions are the partitions of one topic whose replica on this
// broker is throttled: all of them (the "*" wildcard) or those listed.
type ThrottledPartitions struct {
	All        bool
	Partitions []int32
}

// Quota is one side of a broker's replication throttle (Kafka's
// ReplicationQuotaManager): a byte rate limit shared by the throttled
// replicas, the set of throttled replicas, and the measured rate of the
// bytes moved for them. The leader side limits what a leader returns to
// followers fetching throttled partitions; the follower side limits what a
// follower asks for. Over the limit, throttled partitions are left out of a
// fetch (or answered empty) while the others go on; replicas in sync are
// never held back, so that a throttle cannot shrink the ISR.
type Quota struct {
	now func() time.Time

	mu        sync.Mutex // guards the fields below
	limit     int64
	rate      *byteRate
	throttled map[string]ThrottledPartitions
	recorded  int64
}

// NewQuota returns an unthrottled quota with no throttled replicas.
func NewQuota(cfg QuotaConfig, now func() time.Time) (*Quota, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Quota{now: now, limit: Unthrottled, rate: newByteRate(cfg), throttled: map[string]ThrottledPartitions{}}, nil
}

// SetLimit sets the rate limit in bytes per second; Unthrottled (or any
// negative value) removes it.
func (q *Quota) SetLimit(bytesPerSecond int64) {
	if bytesPerSecond < 0 {
		bytesPerSecond = Unthrottled
	}
	q.mu.Lock()
	q.limit = bytesPerSecond
	q.mu.Unlock()
}

// Limit is the rate limit in bytes per second.
func (q *Quota) Limit() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.limit
}

// SetThrottled replaces the throttled replicas: by topic, the partitions
// whose replica on this broker is throttled.
func (q *Quota) SetThrottled(topics map[string]ThrottledPartitions) {
	m := make(map[string]ThrottledPartitions, len(topics))
	for t, tp := range topics {
		if tp.All || len(tp.Partitions) > 0 {
			m[t] = ThrottledPartitions{All: tp.All, Partitions: append([]int32(nil), tp.Partitions...)}
		}
	}
	q.mu.Lock()
	q.throttled = m
	q.mu.Unlock()
}

// IsThrottled reports whether the replica of the partition on this broker
// is throttled.
func (q *Quota) IsThrottled(topic string, partition int32) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.isThrottledLocked(topic, partition)
}

func (q *Quota) isThrottledLocked(topic string, partition int32) bool {
	tp, ok := q.throttled[topic]
	if !ok {
		return false
	}
	if tp.All {
		return true
	}
	for _, p := range tp.Partitions {
		if p == partition {
			return true
		}
	}
	return false
}

// Exceeded reports whether the measured rate is above the limit.
func (q *Quota) Exceeded() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.exceededLocked()
}

func (q *Quota) exceededLocked() bool {
	if q.limit == Unthrottled {
		return false
	}
	return q.rate.perSecond(q.now()) > float64(q.limit)
}

// ShouldThrottle reports whether a fetch must leave the partition out now:
// its replica is throttled, the quota is exceeded, and the replica is not
// in sync (on the leader: the follower is in the ISR; on the follower: it
// had reached the leader's high watermark at its last fetch).
func (q *Quota) ShouldThrottle(topic string, partition int32, inSync bool) bool {
	if inSync {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.isThrottledLocked(topic, partition) && q.exceededLocked()
}

// Record counts bytes moved for throttled replicas.
func (q *Quota) Record(bytes int) {
	if bytes <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.rate.record(q.now(), int64(bytes))
	q.recorded += int64(bytes)
}

// QuotaStats is a quota's state at one moment.
type QuotaStats struct {
	// Limit is the rate limit in bytes per second.
	Limit int64
	// Rate is the measured rate in bytes per second.
	Rate float64
	// Recorded is every byte recorded since the quota was made.
	Recorded int64
}

// Stats returns the quota's state now.
func (q *Quota) Stats() QuotaStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return QuotaStats{Limit: q.limit, Rate: q.rate.perSecond(q.now()), Recorded: q.recorded}
}

// Throttle is a broker's two replication quotas: Leader for the bytes it
// sends as a leader (leader.replication.throttled.rate and the topics'
// leader.replication.throttled.replicas), Follower for the bytes it fetches
// as a follower (follower.replication.throttled.rate and
// follower.replication.throttled.replicas).
type Throttle struct {
	Leader, Follower *Quota
}

// NewThrottle returns a broker's quotas, unthrottled.
func NewThrottle(cfg QuotaConfig, now func() time.Time) (*Throttle, error) {
	l, err := NewQuota(cfg, now)
	if err != nil {
		return nil, err
	}
	f, err := NewQuota(cfg, now)
	if err != nil {
		return nil, err
	}
	return &Throttle{Leader: l, Follower: f}, nil
}

// LeaderHolds is the leader side of the throttle for one partition of a
// follower's fetch: hold is true when the answer must carry no records now
// (a throttled replica, the leader quota exceeded and the follower outside
// the ISR; inISR is asked only then), counted when the bytes sent for the
// partition count against the leader quota. A nil Throttle holds nothing.
func (t *Throttle) LeaderHolds(topic string, partition int32, inISR func() bool) (hold, counted bool) {
	if t == nil || !t.Leader.IsThrottled(topic, partition) {
		return false, false
	}
	return t.Leader.Exceeded() && !inISR(), true
}
