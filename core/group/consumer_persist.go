package group

import (
	"sort"
	"time"
)

// A consumer group's state is written to __consumer_offsets as the records
// of consumer_records.go, so that its members keep their epochs and
// assignments when the coordinator restarts or moves. The group remembers
// what its records in the log say (persisted); after each change it writes
// the records whose value differs and tombstones those that no longer
// apply. A failed write leaves persisted as it was, so the next change
// writes the difference again.

// persistConsumer writes what changed in a consumer group: the group-level
// records and those of member m, or of every member when the group's
// membership or target assignment changed since the last write (allDirty).
// The caller holds the shard's lock.
func (s *shard) persistConsumer(g *group, m *consumerMember) error {
	cg := g.consumer
	all := cg.allDirty || m == nil
	topics := s.c.topics()
	desired := map[string][]byte{}
	put := func(version int16, member string, value []byte) {
		desired[string(encodeConsumerKey(version, g.id, member))] = value
	}
	put(keyConsumerGroupMetadata, "", encodeConsumerMetadata(consumerMetadataValue{epoch: cg.epoch, metaHash: cg.metaHash}))
	put(keyConsumerGroupTargetMetadata, "", encodeTargetMetadata(cg.assignmentEpoch))
	members := []*consumerMember{m}
	if all {
		put(keyConsumerGroupPartitionMetadata, "", encodePartitionMetadata(cg.partitionMetadata(topics)))
		members = members[:0]
		for _, o := range cg.members {
			members = append(members, o)
		}
	}
	for _, o := range members {
		put(keyConsumerGroupMemberMetadata, o.id, encodeMemberMetadata(o.metadataValue()))
		put(keyConsumerGroupTargetMember, o.id, encodeTargetMember(idPartitions(setOf(cg.target[o.id]), topics)))
		put(keyConsumerGroupCurrentAssignment, o.id, encodeCurrentAssignment(o.currentValue(topics)))
	}
	recs := recordChanges(cg.persisted, desired, all)
	if cg.tombstoneClassic {
		recs = append(recs, kv{key: encodeGroupKey(g.id)})
	}
	if err := s.write(recs); err != nil {
		return err
	}
	recordsWritten(cg.persisted, recs, func(key []byte) bool { return isConsumerKey(int16(key[0])<<8 | int16(key[1])) })
	cg.allDirty, cg.tombstoneClassic = false, false
	return nil
}

// memberTombstones are the tombstones that remove a consumer or streams
// group's records; nil for a classic group.
func (g *group) memberTombstones() []kv {
	var persisted map[string][]byte
	switch {
	case g.consumer != nil:
		persisted = g.consumer.persisted
	case g.streams != nil:
		persisted = g.streams.persisted
	default:
		return nil
	}
	return recordTombstones(persisted)
}

// partitionMetadata lists the topics the members subscribe to that exist.
func (cg *consumerGroup) partitionMetadata(topics map[string]TopicInfo) []partitionMetadataTopic {
	names := map[string]bool{}
	for _, m := range cg.members {
		for _, t := range resolveTopics(m, topics) {
			names[t] = true
		}
	}
	out := make([]partitionMetadataTopic, 0, len(names))
	for n := range names {
		out = append(out, partitionMetadataTopic{id: topics[n].ID, name: n, partitions: topics[n].Partitions})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (m *consumerMember) metadataValue() memberMetadataValue {
	v := memberMetadataValue{instanceID: m.instanceID, rackID: m.rackID, clientID: m.clientID, clientHost: m.clientHost,
		topics: m.topics, regex: m.regex, rebalanceTimeoutMs: ms(m.rebalanceTimeout)}
	if v.topics == nil {
		v.topics = []string{}
	}
	if m.assignor != "" {
		a := m.assignor
		v.assignor = &a
	}
	return v
}

// currentValue is the member's current assignment record. A static member
// that left for a moment is written with Kafka's epoch -2; its epoch goes
// into the previous epoch, from where it is restored.
func (m *consumerMember) currentValue(topics map[string]TopicInfo) currentAssignmentValue {
	v := currentAssignmentValue{assigned: idPartitions(m.assigned, topics), revoking: idPartitions(m.revoking, topics)}
	v.epoch, v.previousEpoch, v.state = storedMember(m.epoch, m.previousEpoch, m.departed, m.state)
	return v
}

// idPartitions turns a partition set into TopicPartitions by topic id,
// sorted; partitions of topics that no longer exist are left out.
func idPartitions(set partSet, topics map[string]TopicInfo) []topicIDPartitions {
	byTopic := set.sorted()
	names := make([]string, 0, len(byTopic))
	for t := range byTopic {
		if _, ok := topics[t]; ok {
			names = append(names, t)
		}
	}
	sort.Strings(names)
	out := make([]topicIDPartitions, 0, len(names))
	for _, t := range names {
		out = append(out, topicIDPartitions{id: topics[t].ID, partitions: byTopic[t]})
	}
	return out
}

// namedPartitions turns TopicPartitions by id into a partition set by name;
// topics that no longer exist are dropped.
func namedPartitions(tps []topicIDPartitions, names map[[16]byte]string) partSet {
	s := partSet{}
	for _, tp := range tps {
		n, ok := names[tp.id]
		if !ok {
			continue
		}
		for _, p := range tp.partitions {
			s[topicPart{n, p}] = true
		}
	}
	return s
}

// restoreConsumer rebuilds a consumer group from its records, or returns
// nil when they hold no group metadata. Members get a fresh session: those
// that do not heartbeat within it are removed as usual. A record that no
// longer decodes is logged and left out.
func (s *shard) restoreConsumer(g *group, recs map[string][]byte, now time.Time) *consumerGroup {
	if len(recs) == 0 {
		return nil
	}
	topics := s.c.topics()
	names := make(map[[16]byte]string, len(topics))
	for n, t := range topics {
		names[t.ID] = n
	}
	cg := newConsumerGroup(g, now)
	found := false
	metas := map[string]memberMetadataValue{}
	currents := map[string]currentAssignmentValue{}
	s.replayRecords(g, "consumer", kindConsumer, recs, cg.persisted, func(k recordKey, value []byte) error {
		var derr error
		switch k.version {
		case keyConsumerGroupMetadata:
			var v consumerMetadataValue
			if v, derr = decodeConsumerMetadata(value); derr == nil {
				cg.epoch, cg.metaHash, found = v.epoch, v.metaHash, true
			}
		case keyConsumerGroupTargetMetadata:
			cg.assignmentEpoch, derr = decodeTargetMetadata(value)
		case keyConsumerGroupMemberMetadata:
			var v memberMetadataValue
			if v, derr = decodeMemberMetadata(value); derr == nil {
				metas[k.member] = v
			}
		case keyConsumerGroupTargetMember:
			var tps []topicIDPartitions
			if tps, derr = decodeTargetMember(value); derr == nil {
				cg.target[k.member] = namedPartitions(tps, names).sorted()
			}
		case keyConsumerGroupCurrentAssignment:
			var v currentAssignmentValue
			if v, derr = decodeCurrentAssignment(value); derr == nil {
				currents[k.member] = v
			}
		}
		return derr
	})
	if !found {
		return nil
	}
	for id, md := range metas {
		m := &consumerMember{id: id, instanceID: md.instanceID, rackID: md.rackID, clientID: md.clientID,
			clientHost: md.clientHost, topics: md.topics, regex: md.regex,
			rebalanceTimeout: time.Duration(md.rebalanceTimeoutMs) * time.Millisecond,
			assigned:         partSet{}, revoking: partSet{}}
		if md.assignor != nil {
			m.assignor = *md.assignor
		}
		if cur, ok := currents[id]; ok {
			m.epoch, m.previousEpoch, m.departed, m.state = restoredMember(cur.epoch, cur.previousEpoch, cur.state)
			m.assigned, m.revoking = namedPartitions(cur.assigned, names), namedPartitions(cur.revoking, names)
		}
		cg.members[id] = m
		if m.instanceID != nil {
			cg.instances[*m.instanceID] = id
		}
		s.schedule(&m.session, s.c.cfg.ConsumerSessionTimeout, func() { s.fenceConsumerMember(g, m, "session timeout") })
		if m.state == memberUnrevoked {
			s.schedule(&m.revocation, max(m.rebalanceTimeout, time.Second), func() {
				s.fenceConsumerMember(g, m, "partitions not revoked within the rebalance timeout")
			})
		}
	}
	for id := range cg.target {
		if cg.members[id] == nil {
			delete(cg.target, id)
		}
	}
	cg.assignor = cg.chooseAssignor(s.c.cfg.ConsumerAssignors[0])
	return cg
}
