package share

import (
	"fmt"
	"sort"
	"sync"
)

// TopicPartition names a partition by topic id.
type TopicPartition struct {
	TopicID   [16]byte
	Partition int32
}

// Session epochs with a meaning of their own (ShareSessionEpoch).
const (
	InitialEpoch int32 = 0
	FinalEpoch   int32 = -1
)

type sessionKey struct{ group, member string }

type session struct {
	// epoch is the epoch the next request must carry.
	epoch int32
	// conn is the connection that opened the session.
	conn       uint64
	partitions map[TopicPartition]struct{}
}

// Sessions is the share session cache of one broker, bounded by Kafka's
// group.share.max.share.sessions (2000).
type Sessions struct {
	max int

	mu       sync.Mutex // guards sessions
	sessions map[sessionKey]*session
}

// NewSessions returns an empty cache holding at most max sessions.
func NewSessions(max int) *Sessions {
	if max <= 0 {
		max = 2000
	}
	return &Sessions{max: max, sessions: map[sessionKey]*session{}}
}

// SessionUpdate is what one ShareFetch or ShareAcknowledge does to its
// share session.
type SessionUpdate struct {
	Group, Member string
	Epoch         int32
	// Add are the partitions the request names; Forget those it forgets.
	Add, Forget []TopicPartition
	// AckOnly is ShareAcknowledge: it cannot open a session.
	AckOnly bool
	// Conn identifies the connection of the request; a session is tied
	// to the connection that opened it.
	Conn uint64
}

// Update checks the request's epoch against the member's session and
// applies it: epoch 0 opens a new session (replacing an old one), -1
// closes it after this request, any other must be the next epoch. It
// returns the session's partitions after the update, and whether the
// session is now closed.
func (s *Sessions) Update(u SessionUpdate) (parts []TopicPartition, closed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := sessionKey{u.Group, u.Member}
	cur := s.sessions[k]
	switch u.Epoch {
	case InitialEpoch:
		if u.AckOnly {
			return nil, false, fmt.Errorf("%w: ShareAcknowledge cannot open a share session", ErrInvalidShareSessionEpoch)
		}
		if cur == nil && len(s.sessions) >= s.max {
			return nil, false, fmt.Errorf("%w: %d sessions", ErrShareSessionLimitReached, len(s.sessions))
		}
		cur = &session{epoch: 1, conn: u.Conn, partitions: map[TopicPartition]struct{}{}}
		s.sessions[k] = cur
	case FinalEpoch:
		if cur == nil {
			return nil, false, fmt.Errorf("%w: member %s of %s", ErrShareSessionNotFound, u.Member, u.Group)
		}
		delete(s.sessions, k)
		closed = true
	default:
		if cur == nil {
			return nil, false, fmt.Errorf("%w: member %s of %s", ErrShareSessionNotFound, u.Member, u.Group)
		}
		if u.Epoch != cur.epoch {
			return nil, false, fmt.Errorf("%w: %d, expected %d", ErrInvalidShareSessionEpoch, u.Epoch, cur.epoch)
		}
		cur.epoch++
		if cur.epoch <= 0 {
			cur.epoch = 1 // wraps as Kafka's nextEpoch does
		}
	}
	if !u.AckOnly {
		for _, tp := range u.Add {
			cur.partitions[tp] = struct{}{}
		}
	}
	for _, tp := range u.Forget {
		delete(cur.partitions, tp)
	}
	parts = make([]TopicPartition, 0, len(cur.partitions))
	for tp := range cur.partitions {
		parts = append(parts, tp)
	}
	sort.Slice(parts, func(i, j int) bool {
		a, b := parts[i], parts[j]
		if a.TopicID != b.TopicID {
			return string(a.TopicID[:]) < string(b.TopicID[:])
		}
		return a.Partition < b.Partition
	})
	return parts, closed, nil
}

// Drop forgets every session of a member (it left its group).
func (s *Sessions) Drop(group, member string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, sessionKey{group, member})
}

// Len is the number of open sessions.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// DropConn forgets a member's session if the connection conn opened it,
// and reports whether it did: the connection closed, and Kafka releases
// what the session held.
func (s *Sessions) DropConn(group, member string, conn uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := sessionKey{group, member}
	if cur := s.sessions[k]; cur != nil && cur.conn == conn {
		delete(s.sessions, k)
		return true
	}
	return false
}
