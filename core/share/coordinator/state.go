package coordinator

import (
	"sort"

	"github.com/gregorbroker/gregor/core/share"
)

// State is the durable state of one share-partition as the share
// coordinator keeps it: Kafka's ShareSnapshot value.
type State struct {
	SnapshotEpoch   int32
	StateEpoch      int32
	LeaderEpoch     int32
	StartOffset     int64
	CreateTimestamp int64
	WriteTimestamp  int64
	Batches         []share.StateBatch
}

// Snapshot is the share-partition view of the state.
func (s State) Snapshot() share.Snapshot {
	return share.Snapshot{StartOffset: s.StartOffset, Batches: append([]share.StateBatch(nil), s.Batches...)}
}

// merge is WriteShareGroupState's update as Kafka's share coordinator
// applies it: a start offset of -1 and a leader epoch of -1 keep the
// stored ones, the written state batches replace the stored state of the
// offsets they cover, and everything below the start offset is dropped.
func merge(cur State, startOffset int64, leaderEpoch, stateEpoch int32, batches []share.StateBatch) State {
	out := cur
	if startOffset != -1 {
		out.StartOffset = startOffset
	}
	if leaderEpoch != -1 {
		out.LeaderEpoch = leaderEpoch
	}
	if stateEpoch != -1 {
		out.StateEpoch = stateEpoch
	}
	var res []share.StateBatch
	for _, b := range cur.Batches {
		// The parts of b no new batch covers.
		pieces := []share.StateBatch{b}
		for _, n := range batches {
			var next []share.StateBatch
			for _, p := range pieces {
				if n.LastOffset < p.FirstOffset || n.FirstOffset > p.LastOffset {
					next = append(next, p)
					continue
				}
				if p.FirstOffset < n.FirstOffset {
					l := p
					l.LastOffset = n.FirstOffset - 1
					next = append(next, l)
				}
				if p.LastOffset > n.LastOffset {
					r := p
					r.FirstOffset = n.LastOffset + 1
					next = append(next, r)
				}
			}
			pieces = next
		}
		res = append(res, pieces...)
	}
	// Later batches of one write win over earlier ones they overlap.
	for i, n := range batches {
		pieces := []share.StateBatch{n}
		for _, later := range batches[i+1:] {
			var next []share.StateBatch
			for _, p := range pieces {
				if later.LastOffset < p.FirstOffset || later.FirstOffset > p.LastOffset {
					next = append(next, p)
					continue
				}
				if p.FirstOffset < later.FirstOffset {
					l := p
					l.LastOffset = later.FirstOffset - 1
					next = append(next, l)
				}
				if p.LastOffset > later.LastOffset {
					r := p
					r.FirstOffset = later.LastOffset + 1
					next = append(next, r)
				}
			}
			pieces = next
		}
		res = append(res, pieces...)
	}
	out.Batches = normalize(res, out.StartOffset)
	return out
}

// normalize sorts state batches, drops what lies below start and joins
// neighbours with one state and delivery count.
func normalize(bs []share.StateBatch, start int64) []share.StateBatch {
	sort.Slice(bs, func(i, j int) bool { return bs[i].FirstOffset < bs[j].FirstOffset })
	var out []share.StateBatch
	for _, b := range bs {
		if b.LastOffset < start {
			continue
		}
		if b.FirstOffset < start {
			b.FirstOffset = start
		}
		if k := len(out) - 1; k >= 0 && out[k].LastOffset+1 == b.FirstOffset &&
			out[k].State == b.State && out[k].DeliveryCount == b.DeliveryCount {
			out[k].LastOffset = b.LastOffset
			continue
		}
		out = append(out, b)
	}
	return out
}

// DeliveryComplete counts the offsets at or past the start offset whose
// delivery is complete (acknowledged or archived), KIP-1226's
// DeliveryCompleteCount.
func (s State) DeliveryComplete() int32 {
	var n int64
	for _, b := range s.Batches {
		if b.State == share.Acknowledged || b.State == share.Archived {
			n += b.LastOffset - b.FirstOffset + 1
		}
	}
	return int32(min(n, 1<<31-1))
}
