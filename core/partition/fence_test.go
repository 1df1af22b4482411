package partition

import (
	"errors"
	"testing"
)

// TestAppendFencedByLeaderEpoch: an append admitted in one leader epoch
// appends nothing once the leadership moved on, even back to this broker;
// a follower never stamps a batch.
func TestAppendFencedByLeaderEpoch(t *testing.T) {
	p := openReplica(t, 1, &clock{t: testNow}, testConfig())
	p.SetLeadership(1, 4, []int32{1, 2}, []int32{1, 2})
	epoch, err := p.Admit()
	if err != nil || epoch != 4 {
		t.Fatalf("Admit = %d, %v; want 4", epoch, err)
	}
	p.SetLeadership(1, 5, []int32{1, 2}, []int32{1, 2})
	leo := p.Offsets().LogEndOffset
	if _, err := p.AppendInEpoch(epoch, batch(t, 1), false); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append admitted in epoch 4 after epoch 5: %v, want ErrNotLeader", err)
	}
	if _, err := p.WriteTxnMarkerInEpoch(epoch, TxnMarker{ProducerID: 1}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("marker admitted in epoch 4 after epoch 5: %v, want ErrNotLeader", err)
	}
	if got := p.Offsets().LogEndOffset; got != leo {
		t.Fatalf("log end moved %d -> %d: a fenced append was written", leo, got)
	}
	p.SetLeadership(2, 6, []int32{1, 2}, []int32{1, 2})
	if _, err := p.Append(batch(t, 1)); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append on a follower: %v, want ErrNotLeader", err)
	}
	if _, err := p.Admit(); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Admit on a follower: %v, want ErrNotLeader", err)
	}
	if got := p.Offsets().LogEndOffset; got != leo {
		t.Fatalf("log end moved %d -> %d on a follower", leo, got)
	}
}
