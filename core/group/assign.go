package group

import (
	"sort"
)

// Server-side assignors of consumer (KIP-848) groups.
const (
	AssignorUniform = "uniform"
	AssignorRange   = "range"
)

// assignInput is what an assignor sees: each member's subscribed topics
// (existing ones only), every subscribed topic's partition count, and the
// previous target assignment for stickiness.
type assignInput struct {
	members    []string            // sorted
	subscribed map[string][]string // member -> topics, sorted
	partitions map[string]int32    // topic -> partition count
	previous   map[string]map[string][]int32
}

// assignment is member -> topic -> sorted partitions.
type assignment map[string]map[string][]int32

type topicPart struct {
	topic     string
	partition int32
}

// assign runs the named assignor.
func assign(name string, in assignInput) assignment {
	if name == AssignorRange {
		return assignRange(in)
	}
	return assignUniform(in)
}

// assignRange gives each member, per topic, a contiguous range of
// partitions: the members subscribed to the topic in member id order, the
// first ones taking one extra partition when the count does not divide.
// Co-partitioned topics land together, as with Kafka's range assignor.
func assignRange(in assignInput) assignment {
	out := emptyAssignment(in.members)
	byTopic := map[string][]string{}
	for _, m := range in.members {
		for _, t := range in.subscribed[m] {
			byTopic[t] = append(byTopic[t], m)
		}
	}
	for t, ms := range byTopic {
		n := in.partitions[t]
		per, extra := n/int32(len(ms)), n%int32(len(ms))
		next := int32(0)
		for i, m := range ms {
			count := per
			if int32(i) < extra {
				count++
			}
			for p := next; p < next+count; p++ {
				out[m][t] = append(out[m][t], p)
			}
			next += count
		}
	}
	return out
}

// assignUniform spreads every subscribed partition over the members that
// subscribe to its topic so that no member has more than one partition
// above another that could take it, moving as few partitions as possible
// from the previous assignment.
func assignUniform(in assignInput) assignment {
	owner := map[topicPart]string{}
	count := map[string]int{}
	subscribedTo := func(m, t string) bool {
		ts := in.subscribed[m]
		i := sort.SearchStrings(ts, t)
		return i < len(ts) && ts[i] == t
	}
	// Every partition to assign, in a stable order.
	var all []topicPart
	var topics []string
	for t := range in.partitions {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	takers := map[string][]string{}
	for _, t := range topics {
		for _, m := range in.members {
			if subscribedTo(m, t) {
				takers[t] = append(takers[t], m)
			}
		}
		if len(takers[t]) == 0 {
			continue
		}
		for p := int32(0); p < in.partitions[t]; p++ {
			all = append(all, topicPart{t, p})
		}
	}
	// Keep what the previous assignment gave to members still subscribed.
	for _, m := range in.members {
		for t, ps := range in.previous[m] {
			if !subscribedTo(m, t) {
				continue
			}
			for _, p := range ps {
				tp := topicPart{t, p}
				if p < in.partitions[t] && owner[tp] == "" {
					owner[tp] = m
					count[m]++
				}
			}
		}
	}
	// Place the rest on the least loaded member that can take each.
	least := func(ms []string) string {
		best := ""
		for _, m := range ms {
			if best == "" || count[m] < count[best] {
				best = m
			}
		}
		return best
	}
	for _, tp := range all {
		if owner[tp] == "" {
			m := least(takers[tp.topic])
			owner[tp] = m
			count[m]++
		}
	}
	// Balance: move a partition from a member that has two more than
	// another member able to take it. Each move lowers the spread, so the
	// loop ends; the bound guards against a mistake.
	for moves := 0; moves < len(all)*len(in.members)+1; moves++ {
		moved := false
		for i := len(all) - 1; i >= 0 && !moved; i-- {
			tp := all[i]
			from := owner[tp]
			to := least(takers[tp.topic])
			if count[from] > count[to]+1 {
				owner[tp] = to
				count[from]--
				count[to]++
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	out := emptyAssignment(in.members)
	for _, tp := range all {
		m := owner[tp]
		out[m][tp.topic] = append(out[m][tp.topic], tp.partition)
	}
	for _, ts := range out {
		for t := range ts {
			sort.Slice(ts[t], func(i, j int) bool { return ts[t][i] < ts[t][j] })
		}
	}
	return out
}

func emptyAssignment(members []string) assignment {
	out := make(assignment, len(members))
	for _, m := range members {
		out[m] = map[string][]int32{}
	}
	return out
}
