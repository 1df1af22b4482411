package group

import "fmt"

// UpdateStreamsTopologyDescription keeps the topology description a member
// of a streams group sent with StreamsGroupTopologyDescriptionUpdate
// (KIP-1331) for the group's current topology epoch. The description is
// opaque to the coordinator; StreamsGroupDescribe shows it. It is held in
// memory only: after a restart or a move of the coordinator the group has
// no description until a member sends it again.
func (c *Coordinator) UpdateStreamsTopologyDescription(id, memberID string, topologyEpoch int32, desc any) error {
	s, err := c.lockShard(id)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	g := s.group(id)
	if g == nil || g.streams == nil {
		return fmt.Errorf("%w: group %s is not a streams group", ErrGroupIDNotFound, id)
	}
	sg := g.streams
	if _, ok := sg.members[memberID]; !ok {
		return fmt.Errorf("%w: member %s is not in group %s", ErrUnknownMemberID, memberID, id)
	}
	if sg.topology == nil || sg.topology.Epoch != topologyEpoch {
		return fmt.Errorf("%w: topology epoch %d is not the group's", ErrStreamsInvalidTopologyEpoch, topologyEpoch)
	}
	sg.description, sg.descriptionEpoch = desc, topologyEpoch
	return nil
}

// describedTopology is the stored description of the group's current
// topology, or nil.
func (sg *streamsGroup) describedTopology() any {
	if sg.description == nil || sg.topology == nil || sg.topology.Epoch != sg.descriptionEpoch {
		return nil
	}
	return sg.description
}
