package group

import (
	"fmt"
	"sort"
	"time"
)

// CommitPartition is one offset of an OffsetCommit.
type CommitPartition struct {
	TopicPartition
	Offset      int64
	LeaderEpoch int32
	Metadata    string
}

// CommitRequest is an OffsetCommit.
type CommitRequest struct {
	Group      string
	MemberID   string
	InstanceID *string
	// Generation is the classic generation or the consumer member epoch; a
	// negative value commits outside group management.
	Generation int32
	// RetentionMs is the retention asked for by OffsetCommit v2-v4, or -1.
	RetentionMs int64
	Partitions  []CommitPartition
	// GroupIDNotFound asks for ErrGroupIDNotFound, not ErrIllegalGeneration,
	// when a generation is given for an unknown group (OffsetCommit v9+).
	GroupIDNotFound bool
}

// CommitOffsets validates and stores an OffsetCommit. It returns one error
// (or nil) per partition, or an error for the whole request. The records are
// appended to the group's __consumer_offsets partition before it returns;
// making them durable is the caller's choice (Coordinator.Partition).
func (c *Coordinator) CommitOffsets(req CommitRequest) ([]error, error) {
	s, err := c.lockShard(req.Group)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	g := s.group(req.Group)
	created := false
	if g == nil {
		switch {
		case req.Generation < 0:
			g, created = s.newClassicGroup(req.Group), true
		case req.GroupIDNotFound:
			return nil, ErrGroupIDNotFound
		default:
			return nil, fmt.Errorf("%w: group %q does not exist", ErrIllegalGeneration, req.Group)
		}
	}
	switch {
	case g.streams != nil:
		err = g.streams.validateCommit(req.MemberID, req.Generation)
	case g.consumer != nil:
		err = s.validateConsumerCommit(g, req.MemberID, req.Generation)
	default:
		err = s.validateClassicCommit(g, req)
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	errs := make([]error, len(req.Partitions))
	var recs []kv
	var stored []int
	var offs []Offset
	for i, p := range req.Partitions {
		if len(p.Metadata) > s.c.cfg.OffsetMetadataMaxBytes {
			errs[i] = fmt.Errorf("%w: %d bytes, at most %d", ErrOffsetMetadataTooLarge, len(p.Metadata), s.c.cfg.OffsetMetadataMaxBytes)
			continue
		}
		o := Offset{Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata, CommitTime: now.UnixMilli(), ExpireTime: -1}
		if req.RetentionMs >= 0 {
			o.ExpireTime = now.UnixMilli() + req.RetentionMs
		}
		recs = append(recs, kv{encodeOffsetKey(g.id, p.TopicPartition), encodeOffsetValue(o)})
		stored = append(stored, i)
		offs = append(offs, o)
	}
	if err := s.write(recs); err != nil {
		if created {
			delete(s.groups, g.id)
		}
		return nil, err
	}
	for k, i := range stored {
		g.offsets[req.Partitions[i].TopicPartition] = offs[k]
	}
	if created && len(g.offsets) == 0 {
		delete(s.groups, g.id)
	}
	return errs, nil
}

func (s *shard) validateClassicCommit(g *group, req CommitRequest) error {
	cg := g.classic
	if req.Generation >= 0 || req.MemberID != "" || req.InstanceID != nil {
		m, err := cg.validateMember(req.MemberID, req.InstanceID)
		if err != nil {
			return err
		}
		if req.Generation != cg.generation {
			return fmt.Errorf("%w: %d, the group is at generation %d", ErrIllegalGeneration, req.Generation, cg.generation)
		}
		if cg.state == StateCompletingRebalance {
			return ErrRebalanceInProgress
		}
		s.scheduleSession(g, m, m.sessionTimeout)
		return nil
	}
	if cg.state != StateEmpty {
		return fmt.Errorf("%w: group %q has members; a commit without a member id is refused", ErrUnknownMemberID, g.id)
	}
	return nil
}

// FetchRequest is one group of an OffsetFetch.
type FetchRequest struct {
	Group string
	// MemberID and MemberEpoch identify a consumer group member (v9+); a
	// member id of "" skips the check.
	MemberID    string
	MemberEpoch int32
	// Partitions to fetch; nil fetches every committed offset of the group.
	Partitions []TopicPartition
}

// FetchedOffset is a partition's committed offset; Offset.Offset is -1 when
// the group has none.
type FetchedOffset struct {
	TopicPartition
	Offset
}

// FetchOffsets returns committed offsets.
func (c *Coordinator) FetchOffsets(req FetchRequest) ([]FetchedOffset, error) {
	s, err := c.lockShard(req.Group)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	g := s.group(req.Group)
	if g != nil && g.consumer != nil && req.MemberID != "" {
		if err := g.consumer.validateFetch(req.MemberID, req.MemberEpoch); err != nil {
			return nil, err
		}
	}
	if g != nil && g.streams != nil && req.MemberID != "" {
		if err := g.streams.validateFetch(req.MemberID, req.MemberEpoch); err != nil {
			return nil, err
		}
	}
	none := Offset{Offset: -1, LeaderEpoch: -1, ExpireTime: -1}
	if req.Partitions == nil {
		if g == nil {
			return nil, nil
		}
		out := make([]FetchedOffset, 0, len(g.offsets))
		for tp, o := range g.offsets {
			out = append(out, FetchedOffset{tp, o})
		}
		sort.Slice(out, func(i, j int) bool { return lessTP(out[i].TopicPartition, out[j].TopicPartition) })
		return out, nil
	}
	out := make([]FetchedOffset, len(req.Partitions))
	for i, tp := range req.Partitions {
		out[i] = FetchedOffset{tp, none}
		if g != nil {
			if o, ok := g.offsets[tp]; ok {
				out[i].Offset = o
			}
		}
	}
	return out, nil
}

func lessTP(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

// DeleteOffsets removes committed offsets of partitions the group does not
// consume (OffsetDelete). It returns one error (or nil) per partition, or
// an error for the whole request.
func (c *Coordinator) DeleteOffsets(groupID string, tps []TopicPartition) ([]error, error) {
	s, err := c.lockShard(groupID)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	g := s.group(groupID)
	if g == nil {
		return nil, ErrGroupIDNotFound
	}
	if g.classic != nil && !g.empty() && g.classic.protocolType != "consumer" {
		return nil, ErrNonEmptyGroup
	}
	subscribed, known := g.subscribedTopics()
	errs := make([]error, len(tps))
	var recs []kv
	var gone []TopicPartition
	for i, tp := range tps {
		if !g.empty() && (!known || subscribed[tp.Topic]) {
			errs[i] = ErrGroupSubscribedToTopic
			continue
		}
		if _, ok := g.offsets[tp]; ok {
			recs = append(recs, kv{key: encodeOffsetKey(g.id, tp)})
			gone = append(gone, tp)
		}
	}
	if err := s.write(recs); err != nil {
		return nil, err
	}
	for _, tp := range gone {
		delete(g.offsets, tp)
	}
	return errs, nil
}

// ExpireOffsets removes offsets past their retention, and groups left with
// neither members nor offsets, writing tombstones for both.
func (c *Coordinator) ExpireOffsets() {
	for _, s := range c.allShards() {
		s.expire()
	}
}

func (s *shard) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.usable() != nil {
		return
	}
	now := s.now()
	retention := s.c.cfg.OffsetsRetention
	for _, g := range s.groups {
		expired := g.expiredOffsets(now, retention)
		var recs []kv
		for _, tp := range expired {
			recs = append(recs, kv{key: encodeOffsetKey(g.id, tp)})
		}
		removeGroup := g.empty() && len(g.offsets) == len(expired) &&
			(g.consumer != nil || g.streams != nil || g.classic.state == StateEmpty)
		if removeGroup {
			recs = append(recs, g.memberTombstones()...)
			recs = append(recs, kv{key: encodeGroupKey(g.id)})
		}
		if len(recs) == 0 {
			continue
		}
		if err := s.write(recs); err != nil {
			s.c.log.Warn("cannot expire offsets", "group", g.id, "err", err)
			continue
		}
		for _, tp := range expired {
			delete(g.offsets, tp)
		}
		if len(expired) > 0 {
			s.c.log.Info("expired offsets", "group", g.id, "partitions", len(expired))
		}
		if removeGroup {
			g.shutdown()
			delete(s.groups, g.id)
		}
	}
}

// expiredOffsets lists the offsets past retention: all of them once a group
// managed by a protocol has been empty for the retention; otherwise each
// offset whose commit is older than the retention, for a group without a
// protocol, or whose topic its members no longer consume (KIP-496). An
// expiry an old client set explicitly always applies.
func (g *group) expiredOffsets(now time.Time, retention time.Duration) []TopicPartition {
	nowMs := now.UnixMilli()
	var base func(Offset) (int64, bool)
	switch {
	case g.empty() && (g.consumer != nil || g.streams != nil || g.classic.protocolType != ""):
		since := g.emptySince().UnixMilli()
		base = func(Offset) (int64, bool) { return since, true }
	case g.empty():
		base = func(o Offset) (int64, bool) { return o.CommitTime, true }
	default:
		subscribed, known := g.subscribedTopics()
		base = func(o Offset) (int64, bool) { return o.CommitTime, known }
		var out []TopicPartition
		for tp, o := range g.offsets {
			if o.ExpireTime >= 0 && o.ExpireTime <= nowMs {
				out = append(out, tp)
				continue
			}
			if t, ok := base(o); ok && !subscribed[tp.Topic] && t+retention.Milliseconds() <= nowMs {
				out = append(out, tp)
			}
		}
		return out
	}
	var out []TopicPartition
	for tp, o := range g.offsets {
		if o.ExpireTime >= 0 {
			if o.ExpireTime <= nowMs {
				out = append(out, tp)
			}
			continue
		}
		if t, _ := base(o); t+retention.Milliseconds() <= nowMs {
			out = append(out, tp)
		}
	}
	return out
}

// emptySince is when the group last became empty.
func (g *group) emptySince() time.Time {
	if g.streams != nil {
		return g.streams.stateTime
	}
	if g.consumer != nil {
		return g.consumer.stateTime
	}
	return g.classic.stateTime
}
