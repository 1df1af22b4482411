package coordinator

import (
	"fmt"
	"testing"

	"github.com/gregorbroker/gregor/core/share"
)

func TestMerge(t *testing.T) {
	b := func(first, last int64, st share.RecordState, n int16) share.StateBatch {
		return share.StateBatch{FirstOffset: first, LastOffset: last, State: st, DeliveryCount: n}
	}
	cur := State{StateEpoch: 1, LeaderEpoch: 2, StartOffset: 0,
		Batches: []share.StateBatch{b(0, 4, share.Acknowledged, 1), b(5, 9, share.Available, 2)}}
	for _, tc := range []struct {
		name        string
		start       int64
		leaderEpoch int32
		write       []share.StateBatch
		wantStart   int64
		wantLeader  int32
		want        []share.StateBatch
	}{
		{"keep all", -1, -1, nil, 0, 2, cur.Batches},
		{"overlay the middle", -1, 3, []share.StateBatch{b(3, 6, share.Archived, 3)}, 0, 3,
			[]share.StateBatch{b(0, 2, share.Acknowledged, 1), b(3, 6, share.Archived, 3), b(7, 9, share.Available, 2)}},
		{"move the start", 6, -1, nil, 6, 2, []share.StateBatch{b(6, 9, share.Available, 2)}},
		{"extend and join", -1, -1, []share.StateBatch{b(10, 12, share.Available, 2)}, 0, 2,
			[]share.StateBatch{b(0, 4, share.Acknowledged, 1), b(5, 12, share.Available, 2)}},
		{"later batch of one write wins", -1, -1, []share.StateBatch{b(5, 9, share.Acknowledged, 2), b(7, 7, share.Archived, 5)}, 0, 2,
			[]share.StateBatch{b(0, 4, share.Acknowledged, 1), b(5, 6, share.Acknowledged, 2), b(7, 7, share.Archived, 5), b(8, 9, share.Acknowledged, 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := merge(cur, tc.start, tc.leaderEpoch, 1, tc.write)
			if got.StartOffset != tc.wantStart || got.LeaderEpoch != tc.wantLeader || fmt.Sprint(got.Batches) != fmt.Sprint(tc.want) {
				t.Fatalf("merge: start %d leader %d %v, want %d %d %v", got.StartOffset, got.LeaderEpoch, got.Batches, tc.wantStart, tc.wantLeader, tc.want)
			}
		})
	}
	if n := (State{Batches: []share.StateBatch{b(0, 4, share.Acknowledged, 1), b(5, 6, share.Available, 1), b(7, 7, share.Archived, 5)}}).DeliveryComplete(); n != 6 {
		t.Fatalf("DeliveryComplete = %d, want 6", n)
	}
}
