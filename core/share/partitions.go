package share

import (
	"sort"
	"sync"
	"time"
)

// PartitionKey names one share-partition: a share group and a topic
// partition.
type PartitionKey struct {
	Group string
	TopicPartition
}

// Partitions holds the share-partitions this broker serves as the leader
// of their topic partitions.
type Partitions struct {
	cfg PartitionConfig
	now func() time.Time

	mu    sync.Mutex // guards parts, retired
	parts map[PartitionKey]*Partition
	// retired keeps the counters of deleted share-partitions, so that the
	// totals only grow.
	retired Stats
}

// NewPartitions returns an empty set; cfg is the broker's settings.
func NewPartitions(cfg PartitionConfig, now func() time.Time) *Partitions {
	if now == nil {
		now = time.Now
	}
	return &Partitions{cfg: cfg, now: now, parts: map[PartitionKey]*Partition{}}
}

// Get returns a share-partition. One that does not exist yet is restored
// from the snapshot load returns (its durable state), or, when there is
// none, starts at the offset start returns (share.auto.offset.reset).
// A load error creates nothing: a share-partition whose durable state
// cannot be read is never served.
func (ps *Partitions) Get(k PartitionKey, load func() (Snapshot, bool, error), start func() int64) (*Partition, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p := ps.parts[k]; p != nil {
		return p, nil
	}
	var p *Partition
	s, ok, err := load()
	if err != nil {
		return nil, err
	}
	if ok {
		p = Restore(ps.cfg, ps.now, s)
	} else {
		p = NewPartition(ps.cfg, ps.now, start())
	}
	ps.parts[k] = p
	return p, nil
}

// Lookup returns a share-partition if it exists.
func (ps *Partitions) Lookup(k PartitionKey) *Partition {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.parts[k]
}

// Put installs a share-partition (restored from its durable state).
func (ps *Partitions) Put(k PartitionKey, p *Partition) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.parts[k] = p
}

// Delete forgets a share-partition.
func (ps *Partitions) Delete(k PartitionKey) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p := ps.parts[k]; p != nil {
		st := p.Stats()
		ps.retired.LockTimeouts += st.LockTimeouts
		ps.retired.Archived += st.Archived
	}
	delete(ps.parts, k)
}

// Group lists the share-partitions of a group, by topic and partition.
func (ps *Partitions) Group(group string) []PartitionKey {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out []PartitionKey
	for k := range ps.parts {
		if k.Group == group {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TopicID != b.TopicID {
			return string(a.TopicID[:]) < string(b.TopicID[:])
		}
		return a.Partition < b.Partition
	})
	return out
}

// ReleaseMember releases a member's records in every share-partition of
// its group.
func (ps *Partitions) ReleaseMember(group, member string) {
	ps.mu.Lock()
	var parts []*Partition
	for k, p := range ps.parts {
		if k.Group == group {
			parts = append(parts, p)
		}
	}
	ps.mu.Unlock()
	for _, p := range parts {
		p.ReleaseMember(member)
	}
}

// Totals sums the counters of every share-partition, for metrics.
func (ps *Partitions) Totals() Stats {
	ps.mu.Lock()
	parts := make([]*Partition, 0, len(ps.parts))
	for _, p := range ps.parts {
		parts = append(parts, p)
	}
	t := Stats{LockTimeouts: ps.retired.LockTimeouts, Archived: ps.retired.Archived}
	ps.mu.Unlock()
	for _, p := range parts {
		s := p.Stats()
		t.InFlight += s.InFlight
		t.Acquired += s.Acquired
		t.LockTimeouts += s.LockTimeouts
		t.Archived += s.Archived
	}
	return t
}
