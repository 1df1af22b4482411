package group

import "time"

// A streams group's state is written to __consumer_offsets as the records
// of streams_records.go, by the mechanism consumer groups share
// (persist.go): the group remembers what its records say (persisted),
// writes those whose value changed after each change, and tombstones those
// that no longer apply. After a restart or a move of the coordinator the members carry on
// at their epochs with their tasks.

// persistStreams writes what changed in a streams group: the group-level
// records and those of member m, or of every member when membership or the
// target assignment changed (allDirty, or m nil). The caller holds the
// shard's lock.
func (s *shard) persistStreams(g *group, m *streamsMember) error {
	sg := g.streams
	all := sg.allDirty || m == nil
	desired := map[string][]byte{}
	put := func(version int16, member string, value []byte) {
		desired[string(encodeStreamsKey(version, g.id, member))] = value
	}
	put(keyStreamsGroupMetadata, "", encodeStreamsMetadata(streamsMetadataValue{epoch: sg.epoch, metaHash: sg.metaHash,
		standbyReplicas: int32(sg.standbyReplicas)}))
	put(keyStreamsGroupTargetMetadata, "", encodeTargetMetadata(sg.assignmentEpoch))
	if sg.topology != nil {
		put(keyStreamsGroupTopology, "", encodeStreamsTopology(sg.topology))
	}
	members := []*streamsMember{m}
	if all {
		members = members[:0]
		for _, o := range sg.members {
			members = append(members, o)
		}
	}
	for _, o := range members {
		put(keyStreamsGroupMemberMetadata, o.id, encodeStreamsMember(o.metadataValue()))
		t, ok := sg.target[o.id]
		if !ok {
			t = newStreamsTasks()
		}
		put(keyStreamsGroupTargetMember, o.id, encodeStreamsTarget(t))
		put(keyStreamsGroupCurrentAssignment, o.id, encodeStreamsCurrent(o.currentValue()))
	}
	recs := recordChanges(sg.persisted, desired, all)
	if err := s.write(recs); err != nil {
		return err
	}
	recordsWritten(sg.persisted, recs, nil)
	sg.allDirty = false
	return nil
}

// persistStreamsLogged persists a change no request waits for (a fenced
// member); a failure is logged, and the next change writes it again.
func (s *shard) persistStreamsLogged(g *group, why string) {
	if err := s.persistStreams(g, nil); err != nil {
		s.c.log.Warn("cannot store a streams group change", "group", g.id, "change", why, "err", err)
	}
}

func (m *streamsMember) metadataValue() streamsMemberValue {
	return streamsMemberValue{instanceID: m.instanceID, rackID: m.rackID, clientID: m.clientID, clientHost: m.clientHost,
		rebalanceTimeoutMs: ms(m.rebalanceTimeout), topologyEpoch: m.topologyEpoch, processID: m.processID,
		endpoint: m.endpoint, clientTags: m.clientTags}
}

// currentValue is the member's current assignment record; a static member
// that left for a moment is written with epoch -2 and its epoch as the
// previous one, as for consumer groups.
func (m *streamsMember) currentValue() streamsCurrentValue {
	v := streamsCurrentValue{assigned: m.assigned, revoking: m.revoking}
	v.epoch, v.previousEpoch, v.state = storedMember(m.epoch, m.previousEpoch, m.departed, m.state)
	return v
}

// restoreStreams rebuilds a streams group from its records, or returns nil
// when they hold no group metadata. Members get a fresh session, and are
// sent their whole assignment and the endpoints at their next heartbeat. A
// record that no longer decodes is logged and left out.
func (s *shard) restoreStreams(g *group, recs map[string][]byte, now time.Time) *streamsGroup {
	if len(recs) == 0 {
		return nil
	}
	sg := newStreamsGroup(g, now)
	found := false
	metas := map[string]streamsMemberValue{}
	currents := map[string]streamsCurrentValue{}
	s.replayRecords(g, "streams", kindStreams, recs, sg.persisted, func(k recordKey, value []byte) error {
		var derr error
		switch k.version {
		case keyStreamsGroupMetadata:
			var v streamsMetadataValue
			if v, derr = decodeStreamsMetadata(value); derr == nil {
				sg.epoch, sg.metaHash, sg.standbyReplicas, found = v.epoch, v.metaHash, int(v.standbyReplicas), true
			}
		case keyStreamsGroupTargetMetadata:
			sg.assignmentEpoch, derr = decodeStreamsTargetMetadata(value)
		case keyStreamsGroupTopology:
			sg.topology, derr = decodeStreamsTopology(value)
		case keyStreamsGroupMemberMetadata:
			var v streamsMemberValue
			if v, derr = decodeStreamsMember(value); derr == nil {
				metas[k.member] = v
			}
		case keyStreamsGroupTargetMember:
			var t streamsTasks
			if t, derr = decodeStreamsTarget(value); derr == nil {
				sg.target[k.member] = t
			}
		case keyStreamsGroupCurrentAssignment:
			var v streamsCurrentValue
			if v, derr = decodeStreamsCurrent(value); derr == nil {
				currents[k.member] = v
			}
		default:
			// Records Gregor does not write are kept, to be tombstoned
			// with the group.
		}
		return derr
	})
	if !found {
		return nil
	}
	for id, md := range metas {
		m := &streamsMember{id: id, instanceID: md.instanceID, rackID: md.rackID, clientID: md.clientID,
			clientHost: md.clientHost, processID: md.processID, endpoint: md.endpoint, clientTags: md.clientTags,
			topologyEpoch: md.topologyEpoch, rebalanceTimeout: time.Duration(md.rebalanceTimeoutMs) * time.Millisecond,
			assigned: newStreamsTasks(), revoking: newStreamsTasks(), needEndpoints: true}
		if cur, ok := currents[id]; ok {
			m.epoch, m.previousEpoch, m.departed, m.state = restoredMember(cur.epoch, cur.previousEpoch, cur.state)
			m.assigned, m.revoking = cur.assigned, cur.revoking
		}
		sg.members[id] = m
		if m.instanceID != nil {
			sg.instances[*m.instanceID] = id
		}
		s.schedule(&m.session, s.c.streamsSettings(g.id).sessionTimeout, func() { s.fenceStreamsMember(g, m, "session timeout") })
		if m.state == memberUnrevoked {
			s.schedule(&m.revocation, max(m.rebalanceTimeout, time.Second), func() {
				s.fenceStreamsMember(g, m, "tasks not revoked within the rebalance timeout")
			})
		}
	}
	for id := range sg.target {
		if sg.members[id] == nil {
			delete(sg.target, id)
		}
	}
	sg.configured = configureTopology(sg.topology, s.c.topics())
	return sg
}
