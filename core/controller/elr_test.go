package controller

import (
	"slices"
	"testing"
)

func elrImage(usable ...int32) *Image {
	im := &Image{Brokers: map[int32]Broker{}}
	for _, id := range []int32{1, 2, 3} {
		im.Brokers[id] = Broker{NodeID: id, Fenced: !slices.Contains(usable, id)}
	}
	return im
}

func elrChange(p Partition) *change {
	t := &Topic{Name: "t", Partitions: []Partition{p}}
	return newChange(t, 0)
}

// TestELRShrinkAndElect walks KIP-966's rules: members leaving an ISR below
// min.insync.replicas join the ELR, the ISR may become empty, and once it
// is, a returning ELR member is elected cleanly before unclean election.
func TestELRShrinkAndElect(t *testing.T) {
	pol := elrPolicy{enabled: true, minISR: 2}
	p := Partition{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}

	// 3 leaves: ISR {1,2} is still at min ISR, no ELR.
	ch := elrChange(p)
	ch.removeFromISRWithELR(pol, 3, false)
	if !slices.Equal(ch.p.ISR, []int32{1, 2}) || len(ch.p.ELR) != 0 {
		t.Fatalf("after 3 leaves: isr %v elr %v", ch.p.ISR, ch.p.ELR)
	}
	// 2 leaves: ISR {1} is below min ISR, 2 becomes eligible (3 was not in
	// the ISR when it shrank below min ISR and is not).
	p = ch.p
	ch = elrChange(p)
	ch.removeFromISRWithELR(pol, 2, false)
	if !slices.Equal(ch.p.ISR, []int32{1}) || !slices.Equal(ch.p.ELR, []int32{2}) {
		t.Fatalf("after 2 leaves: isr %v elr %v", ch.p.ISR, ch.p.ELR)
	}
	// the leader 1 is fenced: the ISR becomes empty, 1 joins the ELR, no
	// ELR member is usable, the partition is leaderless with 1 as last
	// known leader (also with unclean allowed: 3 is fenced too).
	p = ch.p
	im := elrImage()
	ch = elrChange(p)
	ch.removeFromISRWithELR(pol, 1, false)
	if ch.electWithELR(im, pol, true, p) {
		t.Fatalf("elected %d with every broker fenced", ch.p.Leader)
	}
	if len(ch.p.ISR) != 0 || !slices.Equal(ch.p.ELR, []int32{1, 2}) || !slices.Equal(ch.p.LastKnownELR, []int32{1}) || ch.p.Leader != -1 {
		t.Fatalf("after 1 is fenced: leader %d isr %v elr %v lastKnown %v", ch.p.Leader, ch.p.ISR, ch.p.ELR, ch.p.LastKnownELR)
	}
	// 3 (not eligible) and 2 (eligible) return: 2 is elected cleanly even
	// though unclean election would take 3... and 2 precedes it anyway;
	// with only 3 back and unclean off, nothing is elected.
	p = ch.p
	ch = elrChange(p)
	if ch.electWithELR(elrImage(3), pol, false, p) {
		t.Fatalf("elected %d from outside ISR and ELR with unclean off", ch.p.Leader)
	}
	ch = elrChange(p)
	if !ch.electWithELR(elrImage(2, 3), pol, true, p) || ch.p.Leader != 2 {
		t.Fatalf("leader %d, want ELR member 2", ch.p.Leader)
	}
	if !slices.Equal(ch.p.ISR, []int32{2}) || slices.Contains(ch.p.ELR, 2) || len(ch.p.LastKnownELR) != 0 {
		t.Fatalf("after electing 2: isr %v elr %v lastKnown %v", ch.p.ISR, ch.p.ELR, ch.p.LastKnownELR)
	}
	// unclean with 3 alone back and unclean on: 3 leads, ELR cleared.
	ch = elrChange(p)
	if !ch.electWithELR(elrImage(3), pol, true, p) || ch.p.Leader != 3 || len(ch.p.ELR) != 0 {
		t.Fatalf("unclean: leader %d elr %v", ch.p.Leader, ch.p.ELR)
	}
}

// TestELRRejoinAndUncleanShutdown: a member rejoining the ISR leaves the
// ELR, the ELR is cleared once the ISR reaches min ISR, and an unclean
// shutdown leaves no eligibility.
func TestELRRejoinAndUncleanShutdown(t *testing.T) {
	pol := elrPolicy{enabled: true, minISR: 3}
	p := Partition{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1}, ELR: []int32{2, 3}}
	ch := elrChange(p)
	prev := slices.Clone(ch.p.ISR)
	ch.p.ISR = []int32{1, 2}
	ch.updateELR(pol, prev)
	if !slices.Equal(ch.p.ELR, []int32{3}) {
		t.Fatalf("elr %v, want [3]", ch.p.ELR)
	}
	ch.p.ISR = []int32{1, 2, 3}
	ch.updateELR(pol, []int32{1, 2})
	if len(ch.p.ELR) != 0 {
		t.Fatalf("elr %v at min ISR", ch.p.ELR)
	}
	ch = elrChange(Partition{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, ELR: []int32{3}})
	ch.removeFromISRWithELR(pol, 2, true)
	if !slices.Equal(ch.p.ELR, []int32{3}) {
		t.Fatalf("elr %v after 2 shut down uncleanly, want [3]", ch.p.ELR)
	}
	// disabled: last member kept, no ELR.
	off := elrPolicy{minISR: 3}
	ch = elrChange(Partition{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1}})
	ch.removeFromISRWithELR(off, 1, false)
	if !slices.Equal(ch.p.ISR, []int32{1}) || len(ch.p.ELR) != 0 {
		t.Fatalf("ELR off: isr %v elr %v", ch.p.ISR, ch.p.ELR)
	}
}
