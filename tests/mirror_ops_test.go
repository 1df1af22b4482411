package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/gregorbroker/gregor/mirror"
)

// deleteBefore raises a source partition's log start offset (as retention
// would) with DeleteRecords.
func deleteBefore(t *testing.T, addr, topic string, p int32, offset int64) {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: topic, Partition: p, At: offset, LeaderEpoch: -1})
	resp, err := adm.DeleteRecords(ctx, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("delete records of %s[%d] before %d: %v", topic, p, offset, err)
	}
}

func partitionStatus(m *inProcessMirror, topic string, p int32) (mirror.PartitionStatus, bool) {
	for _, ps := range m.Status().Partitions {
		if ps.Topic == topic && ps.Partition == p {
			return ps, true
		}
	}
	return mirror.PartitionStatus{}, false
}

// TestMirrorSourceGap deletes source records the mirror has not copied
// while it is down: the gap is reported, never skipped silently. With
// on_source_gap = "skip" mirroring continues after the gap; a link leaves
// the gap in the target's offsets, so the offsets after it stay the
// source's.
func TestMirrorSourceGap(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	tests := []struct {
		mode, onGap string
		continues   bool
		end         int64 // the target's end offset after the gap
	}{
		{mirror.ModeCopy, mirror.GapStop, false, 100},
		{mirror.ModeCopy, mirror.GapSkip, true, 150},
		{mirror.ModeLink, mirror.GapStop, false, 100},
		{mirror.ModeLink, mirror.GapSkip, true, 200},
	}
	for _, tt := range tests {
		t.Run(tt.mode+"-"+tt.onGap, func(t *testing.T) {
			east := startBroker(t, fastLog)
			west := startBroker(t, fastLog)
			createTopic(t, east.Addr, "orders", 1, nil)
			produceMirrorRecords(t, east.Addr, "orders", 0, 100)
			_, cfg := mirrorConfig(t, east.Addr, west.Addr, tt.mode, "")
			cfg.Mirror.OnSourceGap = tt.onGap
			m := startMirror(t, cfg)
			waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: 100}, 30*time.Second)
			m.stop()

			produceMirrorRecords(t, east.Addr, "orders", 100, 100)
			deleteBefore(t, east.Addr, "orders", 0, 150)
			m = startMirror(t, cfg)
			eventually(t, 30*time.Second, "the gap is reported", func() error {
				ps, ok := partitionStatus(m, "orders", 0)
				if !ok || !strings.Contains(ps.Error, "deleted offsets 100 to 149") {
					return fmt.Errorf("status %+v", ps)
				}
				return nil
			})
			if tt.continues {
				// Offsets 150..199 follow the first 100 records on the
				// target (copy: at 100..149; link: at 150..199).
				waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: tt.end}, 30*time.Second)
				return
			}
			ps, _ := partitionStatus(m, "orders", 0)
			if ps.State != mirror.StateFailing {
				t.Fatalf("state = %q, want %q", ps.State, mirror.StateFailing)
			}
			if ends := endOffsets(t, west.Addr, "east.orders"); ends[0] != tt.end {
				t.Fatalf("target end = %d after a stopped gap, want 100", ends[0])
			}
		})
	}
}

// TestMirrorPromoteAndStatus promotes a linked topic: the running mirror
// confirms and stops writing it while other topics keep flowing; status read
// from the clusters shows positions, lag, the heartbeat and the promotion.
func TestMirrorPromoteAndStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	east := startBroker(t, fastLog)
	west := startBroker(t, fastLog)
	createTopic(t, east.Addr, "orders", 2, nil)
	createTopic(t, east.Addr, "orders.b", 1, nil)
	produceMirrorRecords(t, east.Addr, "orders", 0, 200)
	_, cfg := mirrorConfig(t, east.Addr, west.Addr, mirror.ModeLink, "")
	m := startMirror(t, cfg)
	ends := endOffsets(t, east.Addr, "orders")
	waitMirrored(t, west.Addr, "east.orders", ends, 30*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eventually(t, 10*time.Second, "status shows the mirror caught up", func() error {
		st, err := mirror.ReadStatus(ctx, cfg)
		if err != nil {
			return err
		}
		if st.LastHeartbeat.IsZero() || st.Lag() != 0 || len(st.Partitions) != 3 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})

	confirmed, err := mirror.Promote(ctx, cfg, []string{"east.orders"}, 20*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := confirmed["east.orders"]; got[0] != ends[0] || got[1] != ends[1] {
		t.Fatalf("confirmed ends %v, want %v", got, ends)
	}
	produceMirrorRecords(t, east.Addr, "orders", 200, 50)
	produceMirrorRecords(t, east.Addr, "orders.b", 0, 10)
	waitMirrored(t, west.Addr, "east.orders.b", map[int32]int64{0: 10}, 30*time.Second)
	if got := endOffsets(t, west.Addr, "east.orders"); got[0] != ends[0] || got[1] != ends[1] {
		t.Fatalf("promoted topic still written: ends %v, were %v", got, ends)
	}
	for p := int32(0); p < 2; p++ {
		if ps, _ := partitionStatus(m, "orders", p); ps.State != mirror.StatePromoted {
			t.Fatalf("partition %d state %q, want promoted", p, ps.State)
		}
	}
	st, err := mirror.ReadStatus(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Promoted) != 1 || st.Promoted[0] != "east.orders" {
		t.Fatalf("promoted = %v", st.Promoted)
	}
}

// TestMirrorIdentityBothWays runs east->west and west->east with identity
// names: each side's topics reach the other, excluded topics do not, and no
// topic is mirrored back to where it came from.
func TestMirrorIdentityBothWays(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	east := startBroker(t, fastLog)
	west := startBroker(t, fastLog)
	createTopic(t, east.Addr, "orders", 1, nil)
	createTopic(t, east.Addr, "orders.secret", 1, nil)
	createTopic(t, west.Addr, "orders.w", 1, nil)
	produceMirrorRecords(t, east.Addr, "orders", 0, 100)
	produceMirrorRecords(t, east.Addr, "orders.secret", 0, 5)

	section := "include = [\"orders.*\"]\nexclude = [\"orders\\\\.secret\"]\nrename = \"identity\"\n"
	_, eastToWest := mirrorConfig(t, east.Addr, west.Addr, mirror.ModeCopy, section)
	_, westToEast := mirrorConfig(t, west.Addr, east.Addr, mirror.ModeCopy, section)
	westToEast.Source.Name, westToEast.Target.Name = "west", "east"
	startMirror(t, eastToWest)
	waitMirrored(t, west.Addr, "orders", map[int32]int64{0: 100}, 30*time.Second)
	startMirror(t, westToEast)

	produceMirrorRecords(t, west.Addr, "orders.w", 0, 20)
	waitMirrored(t, east.Addr, "orders.w", map[int32]int64{0: 20}, 30*time.Second)
	// Both mirrors have refreshed after orders.w appeared: had either copied a
	// topic back, its records would be doubled now.
	produceMirrorRecords(t, east.Addr, "orders", 100, 1)
	waitMirrored(t, west.Addr, "orders", map[int32]int64{0: 101}, 30*time.Second)
	if got := endOffsets(t, east.Addr, "orders"); got[0] != 101 {
		t.Fatalf("east orders ends at %d: records came back from west", got[0])
	}
	if got := endOffsets(t, west.Addr, "orders.w"); got[0] != 20 {
		t.Fatalf("west orders.w ends at %d: records came back from east", got[0])
	}
	adm := newAdmin(t, west.Addr)
	topics, err := adm.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("orders.secret") {
		t.Fatal("an excluded topic was mirrored")
	}
	if !topics.Has("east.heartbeats") && !topics.Has(mirror.HeartbeatsTopic) {
		t.Fatal("no heartbeats on west")
	}
}
