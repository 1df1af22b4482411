package httpapi

import (
	"context"
	"sort"

	"github.com/gregorbroker/gregor/core/share"
	"github.com/gregorbroker/gregor/core/share/coordinator"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// Share groups in the group views: listed beside classic and consumer
// groups with type "share"; described with their members and, per
// share-partition, the start offset, the lag and the records in flight
// (between the start and end offsets) and under a lock here.

// shareGroups are the share groups this broker coordinates that the
// principal may describe.
func (v *BrokerView) shareGroups(ctx context.Context) []GroupSummary {
	if v.Share == nil {
		return nil
	}
	c := v.Share()
	ls := c.List(nil, nil)
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.GroupID
	}
	ok := v.allowed(ctx, sdkauth.OpDescribe, sdkauth.ResourceGroup, ids...)
	var out []GroupSummary
	for i, l := range ls {
		if !ok[i] {
			continue
		}
		s := GroupSummary{Group: l.GroupID, Type: coordinator.GroupType, State: l.State, ProtocolType: coordinator.GroupType}
		if d, err := c.Groups().Describe(l.GroupID); err == nil {
			s.Members = len(d.Members)
		}
		for _, pl := range v.shareOffsets(ctx, c, l.GroupID, nil) {
			if pl.Lag > 0 {
				s.Lag += pl.Lag
			}
		}
		out = append(out, s)
	}
	return out
}

// shareGroup describes a share group; ok is false when there is none.
func (v *BrokerView) shareGroup(ctx context.Context, id string) (GroupDetail, bool) {
	if v.Share == nil {
		return GroupDetail{}, false
	}
	c := v.Share()
	d, err := c.Groups().Describe(id)
	if err != nil {
		return GroupDetail{}, false
	}
	gd := GroupDetail{GroupSummary: GroupSummary{Group: id, Type: coordinator.GroupType, State: d.State,
		ProtocolType: coordinator.GroupType, Members: len(d.Members)}, Protocol: "simple",
		MemberList: []GroupMember{}, LagByTopic: map[string]int64{}}
	assigned := map[share.TopicPartition]bool{}
	topics := c.Topics()
	for _, m := range d.Members {
		gm := GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assignment: map[string][]int32{}}
		for t, ps := range m.Assignment {
			gm.Assignment[t] = append([]int32(nil), ps...)
			for _, p := range ps {
				assigned[share.TopicPartition{TopicID: topics[t].ID, Partition: p}] = true
			}
		}
		gd.MemberList = append(gd.MemberList, gm)
	}
	gd.Offsets = v.shareOffsets(ctx, c, id, assigned)
	for _, pl := range gd.Offsets {
		if pl.Lag > 0 {
			gd.Lag += pl.Lag
			gd.LagByTopic[pl.Topic] += pl.Lag
		} else if _, ok := gd.LagByTopic[pl.Topic]; !ok {
			gd.LagByTopic[pl.Topic] = 0
		}
	}
	return gd, true
}

// shareOffsets lists the share-partitions of a group that are assigned
// (extra) or served here, on topics the principal may describe.
func (v *BrokerView) shareOffsets(ctx context.Context, c *coordinator.Coordinator, id string, extra map[share.TopicPartition]bool) []PartitionLag {
	tps := map[share.TopicPartition]bool{}
	for tp := range extra {
		tps[tp] = true
	}
	for _, k := range c.Partitions().Group(id) {
		tps[k.TopicPartition] = true
	}
	type named struct {
		topic string
		tp    share.TopicPartition
	}
	var list []named
	var names []string
	for tp := range tps {
		if t, ok := c.TopicName(tp.TopicID); ok {
			list = append(list, named{t, tp})
			names = append(names, t)
		}
	}
	allowed := map[string]bool{}
	for i, ok := range v.allowed(ctx, sdkauth.OpDescribe, sdkauth.ResourceTopic, names...) {
		allowed[names[i]] = allowed[names[i]] || ok
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].topic != list[j].topic {
			return list[i].topic < list[j].topic
		}
		return list[i].tp.Partition < list[j].tp.Partition
	})
	out := []PartitionLag{}
	for _, n := range list {
		if !allowed[n.topic] {
			continue
		}
		pl := PartitionLag{Topic: n.topic, Partition: n.tp.Partition, CommittedOffset: -1, HighWatermark: -1, Lag: -1,
			StartOffset: int64Ptr(-1), InFlight: int64Ptr(-1), Acquired: int64Ptr(-1)}
		if o, ok := c.DescribeOffsets(id, n.topic, n.tp); ok {
			*pl.StartOffset, pl.Lag = o.StartOffset, o.Lag
		}
		if sp := c.Partitions().Lookup(share.PartitionKey{Group: id, TopicPartition: n.tp}); sp != nil {
			st := sp.Stats()
			*pl.InFlight, *pl.Acquired = int64(st.InFlight), int64(st.Acquired)
		}
		if p, ok := v.Partitions.Get(n.topic, n.tp.Partition); ok {
			pl.HighWatermark = p.Offsets().HighWatermark
		}
		out = append(out, pl)
	}
	return out
}

func int64Ptr(v int64) *int64 { return &v }
