package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Share-partition state survives a broker restart through
// __share_group_state: nothing acknowledged or archived is delivered
// again, and everything else is, with its delivery count.
func TestShareGroupStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	b := startRestartableBroker(t, dir)
	topic, group := "share-restart", "sg-restart"
	createTopic(t, b.Addr, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceValues(t, b.Addr, topic, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	id := topicID(t, b.Addr, topic)
	m := newRawShareMember(t, b.Addr, group, "before")
	m.join(topic)
	if got := acquiredOffsets(m.fetch(id, 0, 5*time.Second)); len(got) != 10 {
		t.Fatalf("acquired %v", got)
	}
	// Accept 0-3, release 4, reject 5; 6-9 stay acquired when the broker
	// stops.
	for _, a := range []rawAck{{0, 3, 1}, {4, 4, 2}, {5, 5, 3}} {
		if err := m.ack(id, 0, false, a); err != nil {
			t.Fatalf("ack %+v: %v", a, err)
		}
	}
	b.Stop()

	b = startRestartableBroker(t, dir)
	// The state is read back before any member fetches.
	if start, lag := describeShareOffsets(t, b.Addr, group, topic, 0); start != 4 || lag != 5 {
		t.Fatalf("after restart, before a fetch: start %d lag %d, want 4 and 5", start, lag)
	}
	m2 := newRawShareMember(t, b.Addr, group, "after")
	m2.join(topic)
	var got map[int64]int16
	eventually(t, 30*time.Second, "records redelivered after the restart", func() error {
		got = acquiredOffsets(m2.fetch(id, 0, time.Second))
		if len(got) == 0 {
			return fmt.Errorf("nothing acquired yet")
		}
		return nil
	})
	want := map[int64]int16{4: 2, 6: 2, 7: 2, 8: 2, 9: 2}
	if len(got) != len(want) {
		t.Fatalf("after restart acquired %v, want %v", got, want)
	}
	for o, d := range want {
		if got[o] != d {
			t.Fatalf("after restart acquired %v, want %v", got, want)
		}
	}
	if start, lag := describeShareOffsets(t, b.Addr, group, topic, 0); start != 4 || lag != 5 {
		t.Fatalf("after restart: start %d lag %d, want 4 and 5", start, lag)
	}
}

// heartbeat sends a ShareGroupHeartbeat at the member's epoch.
func (m *rawShareMember) heartbeat() error {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = m.group, m.id, m.epoch
	ctx, cancel := m.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	m.epoch = resp.MemberEpoch
	return nil
}

// Share group membership survives a coordinator restart as Kafka's share
// group records make it: the group epoch, the members, their member epochs
// and assignments come back from __consumer_offsets, and a member goes on
// heartbeating at its epoch.
func TestShareGroupMembershipSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	b := startRestartableBroker(t, dir)
	topic, group := "share-members-restart", "sg-members-restart"
	createTopic(t, b.Addr, topic, 4, nil)
	m1 := newRawShareMember(t, b.Addr, group, "member-1")
	m1.join(topic)
	m2 := newRawShareMember(t, b.Addr, group, "member-2")
	m2.join(topic)
	if err := m1.heartbeat(); err != nil {
		t.Fatalf("m1 heartbeat: %v", err)
	}
	before := describeShareGroup(t, b.Addr, group)
	if len(before.Members) != 2 {
		t.Fatalf("before the restart: %d members", len(before.Members))
	}
	b.Stop()

	b = startRestartableBroker(t, dir)
	var after kmsg.ShareGroupDescribeResponseGroup
	eventually(t, 30*time.Second, "the share group described after the restart", func() error {
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs = []string{group}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := req.RequestWith(ctx, newShareClient(t, b.Addr))
		if err != nil {
			return err
		}
		after = resp.Groups[0]
		return kerr.ErrorForCode(after.ErrorCode)
	})
	summary := func(g kmsg.ShareGroupDescribeResponseGroup) string {
		s := fmt.Sprintf("epoch %d:", g.GroupEpoch)
		for _, m := range g.Members {
			s += fmt.Sprintf(" %s@%d", m.MemberID, m.MemberEpoch)
			for _, tp := range m.Assignment.TopicPartitions {
				s += fmt.Sprintf(" %s%v", tp.Topic, tp.Partitions)
			}
		}
		return s
	}
	if summary(after) != summary(before) {
		t.Fatalf("after the restart %q, want %q", summary(after), summary(before))
	}
	m2.cl = newShareClient(t, b.Addr)
	if err := m2.heartbeat(); err != nil {
		t.Fatalf("m2 heartbeat at epoch %d after the restart: %v", m2.epoch, err)
	}
}
