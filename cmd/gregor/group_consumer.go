package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// describeConsumerProtocolGroup describes a consumer group of KIP-848, which
// DescribeGroups (and so kadm.Lag) does not describe: ConsumerGroupDescribe
// gives its members and assignments, and the lag is computed from the
// committed and log end offsets. found is false when no such group exists.
func describeConsumerProtocolGroup(ctx context.Context, adm *kadm.Client, group string) (v groupView, found bool, err error) {
	described, err := adm.DescribeConsumerGroups(ctx, group)
	if err != nil {
		var se *kadm.ShardErrors
		if errors.As(err, &se) || errors.Is(err, kerr.UnsupportedVersion) {
			return v, false, nil
		}
		return v, false, err
	}
	d, ok := described[group]
	if !ok || errors.Is(d.Err, kerr.GroupIDNotFound) {
		return v, false, nil
	}
	if d.Err != nil {
		return v, true, groupError(group, d.Err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return v, true, groupError(group, err)
	}
	owner := map[string]map[int32]kadm.ConsumerGroupMember{}
	parts := kadm.TopicsSet{}
	for _, m := range d.Members {
		m.Assignment.Each(func(t string, p int32) {
			if owner[t] == nil {
				owner[t] = map[int32]kadm.ConsumerGroupMember{}
			}
			owner[t][p] = m
			parts.Add(t, p)
		})
	}
	committed.Each(func(o kadm.OffsetResponse) { parts.Add(o.Topic, o.Partition) })
	var starts, ends kadm.ListedOffsets
	if topics := parts.Topics(); len(topics) > 0 {
		if starts, err = adm.ListStartOffsets(ctx, topics...); err != nil {
			return v, true, fmt.Errorf("list log start offsets: %w", err)
		}
		if ends, err = adm.ListEndOffsets(ctx, topics...); err != nil {
			return v, true, fmt.Errorf("list log end offsets: %w", err)
		}
	}
	epoch := d.Epoch
	v = groupView{Group: d.Group, State: d.State, Protocol: "consumer/" + d.AssignorName, Epoch: &epoch,
		Members: []groupMemberView{}, Partitions: []groupPartitionView{}}
	for _, m := range d.Members {
		v.Members = append(v.Members, groupMemberView{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
	}
	sortMembers(v.Members)
	for _, tps := range parts.Sorted() {
		for _, p := range tps.Partitions {
			t := tps.Topic
			pv := groupPartitionView{Topic: t, Partition: p}
			commit := int64(-1)
			if o, ok := committed.Lookup(t, p); ok && o.Err == nil && o.At >= 0 {
				commit = o.At
				pv.CurrentOffset = int64Ptr(commit)
			}
			if e, ok := ends.Lookup(t, p); ok && e.Err == nil {
				pv.LogEndOffset = int64Ptr(e.Offset)
				from := commit
				if from < 0 {
					if so, ok := starts.Lookup(t, p); ok && so.Err == nil {
						from = so.Offset
					}
				}
				if from >= 0 {
					pv.Lag = int64Ptr(max(e.Offset-from, 0))
				}
			}
			if m, ok := owner[t][p]; ok {
				pv.MemberID = m.MemberID
			}
			v.Partitions = append(v.Partitions, pv)
		}
	}
	return v, true, nil
}
