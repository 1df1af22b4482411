package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// describeShareGroup describes a share group (KIP-932): ShareGroupDescribe
// gives its members and assignments, DescribeShareGroupOffsets the
// share-partition start offsets (CURRENT-OFFSET) and lag. found is false
// when no such group exists.
func describeShareGroup(ctx context.Context, adm *kadm.Client, group string) (v groupView, found bool, err error) {
	described, err := adm.DescribeShareGroups(ctx, group)
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
	offsets, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return v, true, groupError(group, err)
	}
	owner := map[string]map[int32]string{}
	parts := kadm.TopicsSet{}
	for _, m := range d.Members {
		m.Assignment.Each(func(t string, p int32) {
			if owner[t] == nil {
				owner[t] = map[int32]string{}
			}
			owner[t][p] = m.MemberID
			parts.Add(t, p)
		})
	}
	o := offsets[group]
	o.Offsets.Each(func(so kadm.ShareOffset) { parts.Add(so.Topic, so.Partition) })
	var ends kadm.ListedOffsets
	if topics := parts.Topics(); len(topics) > 0 {
		if ends, err = adm.ListEndOffsets(ctx, topics...); err != nil {
			return v, true, fmt.Errorf("list log end offsets: %w", err)
		}
	}
	epoch := d.GroupEpoch
	v = groupView{Group: d.GroupID, State: d.GroupState, Protocol: "share/" + d.Assignor, Epoch: &epoch,
		Members: []groupMemberView{}, Partitions: []groupPartitionView{}}
	for _, m := range d.Members {
		v.Members = append(v.Members, groupMemberView{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
	}
	sortMembers(v.Members)
	for _, tps := range parts.Sorted() {
		for _, p := range tps.Partitions {
			t := tps.Topic
			pv := groupPartitionView{Topic: t, Partition: p, MemberID: owner[t][p]}
			if so, ok := o.Offsets.Lookup(t, p); ok && so.Err == nil && so.StartOffset >= 0 {
				pv.CurrentOffset = int64Ptr(so.StartOffset)
				if so.Lag >= 0 {
					pv.Lag = int64Ptr(so.Lag)
				}
			}
			if e, ok := ends.Lookup(t, p); ok && e.Err == nil {
				pv.LogEndOffset = int64Ptr(e.Offset)
			}
			v.Partitions = append(v.Partitions, pv)
		}
	}
	return v, true, nil
}
