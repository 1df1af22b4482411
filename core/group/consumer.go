package group

import (
	"fmt"
	"time"
)

// consumerGroup is the membership of a consumer group of KIP-848: members
// heartbeat with their subscriptions and the coordinator assigns partitions.
type consumerGroup struct {
	g               *group
	epoch           int32 // the group epoch, bumped when membership or subscriptions change
	assignmentEpoch int32 // the group epoch the target assignment was computed for
	members         map[string]*consumerMember
	stateTime       time.Time
}

// consumerMember is a member of a consumer group.
type consumerMember struct {
	id               string
	instanceID       *string
	rackID           *string
	clientID         string
	clientHost       string
	epoch            int32
	rebalanceTimeout time.Duration
	topics           []string
	assignor         string
	session          deadline
}

func (cg *consumerGroup) state() State {
	if len(cg.members) == 0 {
		return StateEmpty
	}
	if cg.assignmentEpoch < cg.epoch {
		return StateAssigning
	}
	for _, m := range cg.members {
		if m.epoch != cg.assignmentEpoch {
			return StateReconciling
		}
	}
	return StateStable
}

func (cg *consumerGroup) subscribedTopics() map[string]bool {
	out := map[string]bool{}
	for _, m := range cg.members {
		for _, t := range m.topics {
			out[t] = true
		}
	}
	return out
}

func (cg *consumerGroup) shutdown() {
	for _, m := range cg.members {
		m.session.stop()
	}
}

// validateMemberEpoch is Kafka's check of a member epoch sent with an offset
// commit or fetch.
func validateMemberEpoch(got, want int32) error {
	switch {
	case got > want:
		return fmt.Errorf("%w: %d, the member is at epoch %d", ErrFencedMemberEpoch, got, want)
	case got < want:
		return fmt.Errorf("%w: %d, the member is at epoch %d", ErrStaleMemberEpoch, got, want)
	}
	return nil
}

func (cg *consumerGroup) validateFetch(memberID string, epoch int32) error {
	m := cg.members[memberID]
	if m == nil {
		return ErrUnknownMemberID
	}
	return validateMemberEpoch(epoch, m.epoch)
}

// validateConsumerCommit checks an offset commit against a consumer group:
// one without a member id commits only into an empty group.
func (s *shard) validateConsumerCommit(g *group, memberID string, epoch int32) error {
	cg := g.consumer
	if epoch < 0 && memberID == "" && len(cg.members) == 0 {
		return nil
	}
	m := cg.members[memberID]
	if m == nil {
		return ErrUnknownMemberID
	}
	return validateMemberEpoch(epoch, m.epoch)
}
