// Package fetchsession owns the broker's cache of incremental fetch sessions
// (KIP-227): which partitions each session holds, what its fetcher was last
// told, and the eviction rules. It works on decoded Fetch requests and
// responses and reads no partition itself; the Fetch handler reads the
// partitions a Plan lists and hands the response back to Finish. It imports
// no other core package.
package fetchsession

import (
	"container/list"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Incremental fetch sessions (KIP-227). A full fetch (epoch 0) creates a
// session when the cache has room and answers with its id; the consumer then
// sends epoch 1, 2, ... naming only the partitions whose fetch position
// changed (and the ones it forgets), and the broker answers only the
// partitions with something new. Epoch -1 closes a session. The rules are
// Kafka's FetchManager, FetchSession and FetchSessionCache (one shard).

// fetchSessionEvictionMs is how long a session stays safe from eviction by a
// larger one after it is created, and how long unused makes it stale
// (Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS).
const fetchSessionEvictionMs = 120000

const (
	fetchInitialEpoch = 0  // a full fetch that asks for a session
	fetchFinalEpoch   = -1 // a full fetch that closes its session and wants none
)

// nextFetchEpoch is the epoch after e, wrapping to 1 (never 0) as Kafka does.
func nextFetchEpoch(e int32) int32 {
	switch {
	case e < 0:
		return fetchFinalEpoch
	case e == math.MaxInt32:
		return 1
	}
	return e + 1
}

// Part is one partition a fetch reads, with the fetcher's position.
type Part struct {
	Key
	FetchOffset      int64
	MaxBytes         int32 // the partition's own limit (PartitionMaxBytes)
	LeaderEpoch      int32 // the fetcher's current leader epoch
	LastFetchedEpoch int32 // -1 when the fetcher sent none
}

// Key names a partition of a fetch request by topic name (below v13) or
// topic id (v13+); the other of the two is zero.
type Key struct {
	Topic     string
	TopicID   [16]byte
	Partition int32
}

func isNew(seen map[Key]struct{}, k Key) bool {
	if _, dup := seen[k]; dup {
		return false
	}
	seen[k] = struct{}{}
	return true
}

// RequestParts lists the partitions of a request once each, in its order.
func RequestParts(req *kmsg.FetchRequest) []Part {
	n := 0
	for i := range req.Topics {
		n += len(req.Topics[i].Partitions)
	}
	parts := make([]Part, 0, n)
	seen := make(map[Key]struct{}, n)
	for i := range req.Topics {
		rt := &req.Topics[i]
		for _, rp := range rt.Partitions {
			k := Key{rt.Topic, rt.TopicID, rp.Partition}
			if !isNew(seen, k) {
				continue
			}
			parts = append(parts, Part{k, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch})
		}
	}
	return parts
}

// cachedPartition is a session's partition: the fetcher's last position and
// what the last response told it.
type cachedPartition struct {
	Part
	highWatermark, lastStable, logStart int64
}

// mustRespond says whether an incremental response carries sp, recording
// what it tells the fetcher: new records, a changed high watermark, log start
// offset or last stable offset, an error, a preferred read replica or a
// diverging epoch. After an error the cached high watermark is -1, so the
// partition is sent again once the error clears.
func (cp *cachedPartition) mustRespond(sp *kmsg.FetchResponseTopicPartition) bool {
	must := len(sp.RecordBatches) > 0 || sp.PreferredReadReplica >= 0 ||
		sp.DivergingEpoch.Epoch != -1 || sp.DivergingEpoch.EndOffset != -1
	if cp.highWatermark != sp.HighWatermark {
		cp.highWatermark, must = sp.HighWatermark, true
	}
	if cp.logStart != sp.LogStartOffset {
		cp.logStart, must = sp.LogStartOffset, true
	}
	if cp.lastStable != sp.LastStableOffset {
		cp.lastStable, must = sp.LastStableOffset, true
	}
	if sp.ErrorCode != 0 {
		cp.highWatermark, must = -1, true
	}
	return must
}

type fetchSession struct {
	id           int32
	privileged   bool // created by a follower
	usesTopicIDs bool // created by a v13+ request
	creationMs   int64
	lastUsedMs   int64
	epoch        int32 // the epoch the next request must carry
	// order holds *cachedPartition in Kafka's order: a partition that
	// returned records moves to the back, so the fetch.max.bytes budget
	// rotates over the partitions.
	order *list.List
	index map[Key]*list.Element
	// As of the last touch: the size the cache counts and whether the
	// session may be evicted by any newcomer or by a privileged one.
	cachedSize          int
	byAll, byPrivileged bool
}

// Cache is the broker's cache of incremental fetch sessions, at most
// Slots of them (max.incremental.fetch.session.cache.slots; 0 turns sessions
// off). When full, a new session evicts the one unused longest if that is
// older than two minutes; otherwise the least valuable evictable session
// (unprivileged before privileged, then fewest partitions) if the newcomer is
// worth at least as much. A session is evictable by anyone two minutes after
// its creation, and by a follower's session at once when it is a consumer's.
//
// mu guards the cache and every field of every session in it: a fetch holds
// it when it arrives (to look up and update its session) and when its
// response is ready (to drop what the fetcher already knows), never while it
// reads partitions or waits in a long poll.
type Cache struct {
	mu          sync.Mutex
	slots       int
	evictionMs  int64
	now         func() time.Time
	sessions    map[int32]*fetchSession
	partitions  int // cached partitions over all sessions
	evictions   uint64
	incremental uint64
}

// New returns a cache of at most slots sessions on clock now.
func New(slots int, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{slots: slots, evictionMs: fetchSessionEvictionMs, now: now, sessions: map[int32]*fetchSession{}}
}

// Stats is what the cache reports as metrics.
type Stats struct {
	Sessions, Partitions int
	Evictions            uint64
	Incremental          uint64 // incremental fetches served
}

// Stats reports the cache's size and counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{len(c.sessions), c.partitions, c.evictions, c.incremental}
}

// Plan is what one fetch reads and how its response is finished.
type Plan struct {
	Parts   []Part        // the partitions to read, in the order to read them
	ErrCode int16         // a session error: answer it with no partitions
	session *fetchSession // an incremental fetch's session
	epoch   int32         // the request's epoch
	create  bool          // a full fetch asking for a session
	topicID bool          // the request names topics by id (v13+)
	follow  bool          // the request is a follower's
}

// begin resolves a request's session: a full fetch closes the session it
// names; an incremental one must name a live session at its epoch, in the
// same topic naming, and updates it with its partitions and forgotten topics.
func (c *Cache) Begin(version int16, req *kmsg.FetchRequest, follower bool) Plan {
	parts := RequestParts(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.SessionEpoch == fetchInitialEpoch || req.SessionEpoch == fetchFinalEpoch {
		if s := c.sessions[req.SessionID]; s != nil {
			c.remove(s)
		}
		return Plan{Parts: parts, create: req.SessionEpoch == fetchInitialEpoch, topicID: version >= 13, follow: follower}
	}
	s := c.sessions[req.SessionID]
	switch {
	case s == nil:
		return Plan{ErrCode: kerr.FetchSessionIDNotFound.Code}
	case s.epoch != req.SessionEpoch:
		return Plan{ErrCode: kerr.InvalidFetchSessionEpoch.Code}
	case s.usesTopicIDs != (version >= 13):
		return Plan{ErrCode: kerr.FetchSessionTopicIDError.Code}
	}
	for _, p := range parts {
		if e := s.index[p.Key]; e != nil {
			e.Value.(*cachedPartition).Part = p
		} else {
			s.index[p.Key] = s.order.PushBack(&cachedPartition{Part: p, highWatermark: -1, lastStable: -1, logStart: -1})
		}
	}
	for i := range req.ForgottenTopics {
		ft := &req.ForgottenTopics[i]
		for _, p := range ft.Partitions {
			k := Key{ft.Topic, ft.TopicID, p}
			if e := s.index[k]; e != nil {
				s.order.Remove(e)
				delete(s.index, k)
			}
		}
	}
	if s.order.Len() == 0 {
		c.remove(s)
		return Plan{Parts: parts}
	}
	c.touch(s, c.now().UnixMilli())
	s.epoch = nextFetchEpoch(s.epoch)
	c.incremental++
	all := make([]Part, 0, s.order.Len())
	for e := s.order.Front(); e != nil; e = e.Next() {
		all = append(all, e.Value.(*cachedPartition).Part)
	}
	return Plan{Parts: all, session: s, epoch: req.SessionEpoch}
}

// finish sets the response's session id: an incremental response keeps only
// the partitions with news; a full fetch at epoch 0 gets a new session if
// the cache has (or can make) room, else session id 0.
func (c *Cache) Finish(p *Plan, resp *kmsg.FetchResponse) *kmsg.FetchResponse {
	resp.SessionID = 0
	switch {
	case p.session != nil:
		c.mu.Lock()
		defer c.mu.Unlock()
		s := p.session
		resp.SessionID = s.id
		if s.epoch != nextFetchEpoch(p.epoch) {
			// Another request with this epoch went by: a duplicate.
			resp.ErrorCode, resp.Topics = kerr.InvalidFetchSessionEpoch.Code, nil
			return resp
		}
		topics := resp.Topics[:0]
		for _, st := range resp.Topics {
			kept := st.Partitions[:0]
			for i := range st.Partitions {
				sp := &st.Partitions[i]
				e := s.index[Key{st.Topic, st.TopicID, sp.Partition}]
				if e == nil {
					kept = append(kept, *sp)
					continue
				}
				if e.Value.(*cachedPartition).mustRespond(sp) {
					kept = append(kept, *sp)
					if len(sp.RecordBatches) > 0 {
						s.order.MoveToBack(e)
					}
				}
			}
			if st.Partitions = kept; len(kept) > 0 {
				topics = append(topics, st)
			}
		}
		resp.Topics = topics
	case p.create:
		resp.SessionID = c.create(p, resp)
	}
	return resp
}

// create adds a session holding the partitions of a full fetch's response,
// evicting one if the cache is full and a session may go; 0 when none does.
func (c *Cache) create(p *Plan, resp *kmsg.FetchResponse) int32 {
	size := 0
	for i := range resp.Topics {
		size += len(resp.Topics[i].Partitions)
	}
	req := make(map[Key]Part, len(p.Parts))
	for _, fp := range p.Parts {
		req[fp.Key] = fp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now().UnixMilli()
	if len(c.sessions) >= c.slots && !c.tryEvict(p.follow, size, now) {
		return 0
	}
	s := &fetchSession{id: c.newID(), privileged: p.follow, usesTopicIDs: p.topicID, creationMs: now,
		epoch: nextFetchEpoch(fetchInitialEpoch), order: list.New(), index: make(map[Key]*list.Element, size), cachedSize: -1}
	for _, st := range resp.Topics {
		for i := range st.Partitions {
			sp := &st.Partitions[i]
			k := Key{st.Topic, st.TopicID, sp.Partition}
			cp := &cachedPartition{Part: req[k], highWatermark: sp.HighWatermark, lastStable: sp.LastStableOffset, logStart: sp.LogStartOffset}
			cp.Key = k
			s.index[k] = s.order.PushBack(cp)
		}
	}
	c.sessions[s.id] = s
	c.touch(s, now)
	return s.id
}

// newID draws a positive session id not in use; 0 means no session.
func (c *Cache) newID() int32 {
	for {
		id := rand.Int32N(math.MaxInt32-1) + 1
		if _, used := c.sessions[id]; !used {
			return id
		}
	}
}

// evictKeyLess orders sessions by value: unprivileged first, then fewer
// partitions, then id.
func evictKeyLess(aPriv bool, aSize int, aID int32, bPriv bool, bSize int, bID int32) bool {
	if aPriv != bPriv {
		return !aPriv
	}
	if aSize != bSize {
		return aSize < bSize
	}
	return aID < bID
}

// tryEvict makes room for a session of size partitions: first the session
// unused longest if it is stale, else the least valuable evictable one if it
// is worth no more than the newcomer. The scan is linear in the slot count
// and happens only when the cache is full.
func (c *Cache) tryEvict(privileged bool, size int, now int64) bool {
	var stale, victim *fetchSession
	for _, s := range c.sessions {
		if stale == nil || s.lastUsedMs < stale.lastUsedMs || s.lastUsedMs == stale.lastUsedMs && s.id < stale.id {
			stale = s
		}
		if ok := s.byAll || privileged && s.byPrivileged; ok &&
			(victim == nil || evictKeyLess(s.privileged, s.cachedSize, s.id, victim.privileged, victim.cachedSize, victim.id)) {
			victim = s
		}
	}
	switch {
	case stale == nil:
		return false
	case now-stale.lastUsedMs > c.evictionMs:
		victim = stale
	case victim == nil || evictKeyLess(privileged, size, 0, victim.privileged, victim.cachedSize, victim.id):
		return false
	}
	c.remove(victim)
	c.evictions++
	return true
}

// touch marks s used now and records its size and evictability.
func (c *Cache) touch(s *fetchSession, now int64) {
	s.lastUsedMs = now
	if s.cachedSize >= 0 {
		c.partitions -= s.cachedSize
	}
	s.cachedSize = s.order.Len()
	c.partitions += s.cachedSize
	old := now-s.creationMs > c.evictionMs
	s.byAll = old
	s.byPrivileged = !s.privileged || old
}

func (c *Cache) remove(s *fetchSession) {
	if c.sessions[s.id] != s {
		return
	}
	delete(c.sessions, s.id)
	c.partitions -= s.cachedSize
}
