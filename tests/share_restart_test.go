package tests

import (
	"fmt"
	"testing"
	"time"
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
