package partition

import (
	"sort"
	"sync"
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Set is the partitions hosted on this broker. Lookups are concurrent; the
// server adds and removes partitions as metadata changes.
type Set struct {
	mu    sync.RWMutex // guards parts
	parts map[TopicPartition]*Partition
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{parts: map[TopicPartition]*Partition{}} }

// Get returns a hosted partition.
func (s *Set) Get(topic string, partition int32) (*Partition, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.parts[TopicPartition{topic, partition}]
	return p, ok
}

// Put adds or replaces a partition.
func (s *Set) Put(p *Partition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parts[TopicPartition{p.Topic, p.Index}] = p
}

// Remove drops a partition from the set and returns it.
func (s *Set) Remove(topic string, partition int32) (*Partition, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tp := TopicPartition{topic, partition}
	p, ok := s.parts[tp]
	delete(s.parts, tp)
	return p, ok
}

// All returns every hosted partition ordered by topic and index.
func (s *Set) All() []*Partition {
	s.mu.RLock()
	out := make([]*Partition, 0, len(s.parts))
	for _, p := range s.parts {
		out = append(out, p)
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Index < out[j].Index
	})
	return out
}
