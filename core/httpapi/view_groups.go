package httpapi

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/group"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func groupErr(id string, err error) error {
	switch {
	case errors.Is(err, group.ErrGroupIDNotFound):
		return fmt.Errorf("httpapi: group %s: %w", id, ErrNotFound)
	case errors.Is(err, group.ErrCoordinatorLoadInProgress), errors.Is(err, group.ErrNotCoordinator),
		errors.Is(err, group.ErrCoordinatorNotAvailable):
		return fmt.Errorf("httpapi: group %s: %w: %v", id, ErrUnavailable, err)
	}
	return fmt.Errorf("httpapi: group %s: %w", id, err)
}

// Groups implements Admin: the groups the principal may describe,
// with their total lag.
func (v *BrokerView) Groups(ctx context.Context) ([]GroupSummary, error) {
	if v.GroupCoordinator == nil {
		return nil, fmt.Errorf("httpapi: %w: no group coordinator", ErrUnavailable)
	}
	ls, err := v.GroupCoordinator.ListGroups(nil, nil)
	if err != nil && len(ls) == 0 {
		return nil, groupErr("list", err)
	}
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.Group
	}
	ok := v.allowed(ctx, sdkauth.OpDescribe, sdkauth.ResourceGroup, ids...)
	out := make([]GroupSummary, 0, len(ls))
	for i, l := range ls {
		if !ok[i] {
			continue
		}
		s := GroupSummary{Group: l.Group, Type: l.Type, State: string(l.State), ProtocolType: l.ProtocolType}
		if d, err := v.GroupCoordinator.DescribeGroup(l.Group); err == nil {
			s.Members = len(d.Members)
		}
		if d, err := v.GroupCoordinator.DescribeConsumerGroup(l.Group); err == nil {
			s.Members = len(d.Members)
		}
		lags, _ := v.groupLag(ctx, l.Group, nil)
		for _, pl := range lags {
			if pl.Lag > 0 {
				s.Lag += pl.Lag
			}
		}
		out = append(out, s)
	}
	return append(out, v.shareGroups(ctx)...), nil
}

// groupLag lists a group's committed offsets on topics the principal may
// describe, with lag against the high watermark of partitions hosted here.
func (v *BrokerView) groupLag(ctx context.Context, id string, owner map[group.TopicPartition]string) ([]PartitionLag, error) {
	offs, err := v.GroupCoordinator.FetchOffsets(group.FetchRequest{Group: id})
	if err != nil {
		return nil, err
	}
	topics := map[string]bool{}
	var names []string
	for _, o := range offs {
		if _, seen := topics[o.Topic]; !seen {
			topics[o.Topic] = false
			names = append(names, o.Topic)
		}
	}
	for i, ok := range v.allowed(ctx, sdkauth.OpDescribe, sdkauth.ResourceTopic, names...) {
		topics[names[i]] = ok
	}
	out := make([]PartitionLag, 0, len(offs))
	for _, o := range offs {
		if !topics[o.Topic] || o.Offset.Offset < 0 {
			continue
		}
		pl := PartitionLag{Topic: o.Topic, Partition: o.Partition, CommittedOffset: o.Offset.Offset,
			HighWatermark: -1, Lag: -1, Metadata: o.Metadata, MemberID: owner[o.TopicPartition]}
		if p, ok := v.Partitions.Get(o.Topic, o.Partition); ok {
			pl.HighWatermark = p.Offsets().HighWatermark
			pl.Lag = max(0, pl.HighWatermark-pl.CommittedOffset)
		}
		out = append(out, pl)
	}
	return out, nil
}

// Group implements Admin: DESCRIBE on the group shows its members,
// their assignments and the lag of each committed partition.
func (v *BrokerView) Group(ctx context.Context, id string) (GroupDetail, error) {
	if v.GroupCoordinator == nil {
		return GroupDetail{}, fmt.Errorf("httpapi: %w: no group coordinator", ErrUnavailable)
	}
	if err := v.denied(ctx, sdkauth.OpDescribe, sdkauth.ResourceGroup, id); err != nil {
		return GroupDetail{}, err
	}
	d, err := v.GroupCoordinator.DescribeGroup(id)
	if err != nil {
		if sd, ok := v.shareGroup(ctx, id); ok && errors.Is(err, group.ErrGroupIDNotFound) {
			return sd, nil
		}
		return GroupDetail{}, groupErr(id, err)
	}
	gd := GroupDetail{GroupSummary: GroupSummary{Group: id, Type: d.Type, State: string(d.State),
		ProtocolType: d.ProtocolType}, Protocol: d.Protocol, MemberList: []GroupMember{}, LagByTopic: map[string]int64{}}
	owner := map[group.TopicPartition]string{}
	// DescribeGroup shows a consumer (KIP-848) group's type and state only;
	// its members and assignments come from DescribeConsumerGroup.
	if cd, err := v.GroupCoordinator.DescribeConsumerGroup(id); err == nil {
		gd.Protocol = cd.Assignor
		for _, m := range cd.Members {
			gd.MemberList = append(gd.MemberList, GroupMember{MemberID: m.MemberID, ClientID: m.ClientID,
				ClientHost: m.ClientHost, InstanceID: deref(m.InstanceID), Assignment: m.Assignment})
		}
	}
	for _, m := range d.Members {
		gm := GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			InstanceID: deref(m.InstanceID), Assignment: map[string][]int32{}}
		if d.ProtocolType == "consumer" && len(m.Assignment) > 0 {
			var a kmsg.ConsumerMemberAssignment
			if a.ReadFrom(m.Assignment) == nil {
				for _, t := range a.Topics {
					gm.Assignment[t.Topic] = append(gm.Assignment[t.Topic], t.Partitions...)
				}
			}
		}
		gd.MemberList = append(gd.MemberList, gm)
	}
	for _, m := range gd.MemberList {
		for t, ps := range m.Assignment {
			for _, p := range ps {
				owner[group.TopicPartition{Topic: t, Partition: p}] = m.MemberID
			}
		}
	}
	gd.Members = len(gd.MemberList)
	lags, err := v.groupLag(ctx, id, owner)
	if err != nil {
		return GroupDetail{}, groupErr(id, err)
	}
	gd.Offsets = lags
	for _, pl := range lags {
		if pl.Lag > 0 {
			gd.Lag += pl.Lag
			gd.LagByTopic[pl.Topic] += pl.Lag
		} else if _, ok := gd.LagByTopic[pl.Topic]; !ok {
			gd.LagByTopic[pl.Topic] = 0
		}
	}
	return gd, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Extensions implements Admin: the extensions broker.toml
// declares, the topics that pick them and their call counts; DESCRIBE on
// the cluster is needed.
func (v *BrokerView) Extensions(ctx context.Context) ([]Extension, error) {
	if err := v.denied(ctx, sdkauth.OpDescribe, sdkauth.ResourceCluster, sdkauth.ClusterName); err != nil {
		return nil, err
	}
	stats := map[string]extension.StatsSnapshot{}
	if v.ExtensionSet != nil {
		for _, s := range v.ExtensionSet.Stats() {
			stats[s.Name] = s
		}
	}
	im := v.Controller.Image()
	users := map[string][]string{}
	for name := range im.Topics {
		c := im.TopicConfig(name)
		for _, k := range []string{extension.ConfigPartitioner, extension.ConfigRetention} {
			if v := c[k]; v != "" {
				users[v] = append(users[v], name)
			}
		}
	}
	names := make([]string, 0, len(v.Config.Extensions))
	for n := range v.Config.Extensions {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Extension, 0, len(names))
	for _, n := range names {
		decl := v.Config.Extensions[n]
		e := Extension{Name: n, Kind: decl.Kind, Runtime: "plugin", Path: decl.Exec,
			Fallback: decl.EffectiveFallback(), Topics: users[n]}
		if decl.WASM != "" {
			e.Runtime, e.Path = "wasm", decl.WASM
		}
		if e.Topics == nil {
			e.Topics = []string{}
		}
		sort.Strings(e.Topics)
		if s, ok := stats[n]; ok {
			e.Calls, e.Errors, e.Fallbacks = s.Calls, s.Errors, s.Fallbacks
			if s.Calls > 0 {
				e.MeanMs = float64(s.Total.Microseconds()) / 1000 / float64(s.Calls)
			}
			e.MaxMs = float64(s.Max.Microseconds()) / 1000
		}
		out = append(out, e)
	}
	return out, nil
}
