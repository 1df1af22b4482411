package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// describeConsumerProtocolGroup prints a consumer group of KIP-848, which
// DescribeGroups (and so kadm.Lag) does not describe: ConsumerGroupDescribe
// gives its members and assignments, and the lag is computed from the
// committed and log end offsets. found is false when no such group exists.
func describeConsumerProtocolGroup(ctx context.Context, adm *kadm.Client, w io.Writer, group string) (found bool, err error) {
	described, err := adm.DescribeConsumerGroups(ctx, group)
	if err != nil {
		var se *kadm.ShardErrors
		if errors.As(err, &se) || errors.Is(err, kerr.UnsupportedVersion) {
			return false, nil
		}
		return false, err
	}
	d, ok := described[group]
	if !ok || errors.Is(d.Err, kerr.GroupIDNotFound) {
		return false, nil
	}
	if d.Err != nil {
		return true, groupError(group, d.Err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return true, groupError(group, err)
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
			return true, fmt.Errorf("list log start offsets: %w", err)
		}
		if ends, err = adm.ListEndOffsets(ctx, topics...); err != nil {
			return true, fmt.Errorf("list log end offsets: %w", err)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP\t%s\nSTATE\t%s\nPROTOCOL\tconsumer/%s\nEPOCH\t%d\nMEMBERS\t%d\n\n", d.Group, d.State, d.AssignorName, d.Epoch, len(d.Members))
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tMEMBER-ID\tCLIENT-ID\tHOST")
	list := parts.Sorted()
	consuming := map[string]bool{}
	for _, tps := range list {
		for _, p := range tps.Partitions {
			t := tps.Topic
			current, end, lag := "-", "-", "-"
			commit := int64(-1)
			if o, ok := committed.Lookup(t, p); ok && o.Err == nil && o.At >= 0 {
				commit = o.At
				current = strconv.FormatInt(commit, 10)
			}
			if e, ok := ends.Lookup(t, p); ok && e.Err == nil {
				end = strconv.FormatInt(e.Offset, 10)
				from := commit
				if from < 0 {
					if s, ok := starts.Lookup(t, p); ok && s.Err == nil {
						from = s.Offset
					}
				}
				if from >= 0 {
					lag = strconv.FormatInt(max(e.Offset-from, 0), 10)
				}
			}
			member, client, host := "-", "-", "-"
			if m, ok := owner[t][p]; ok {
				member, client, host = m.MemberID, m.ClientID, m.ClientHost
				consuming[m.MemberID] = true
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", t, p, current, end, lag, member, client, host)
		}
	}
	members := append([]kadm.ConsumerGroupMember(nil), d.Members...)
	sort.Slice(members, func(i, j int) bool { return members[i].MemberID < members[j].MemberID })
	for _, m := range members {
		if !consuming[m.MemberID] {
			fmt.Fprintf(tw, "-\t-\t-\t-\t-\t%s\t%s\t%s\n", m.MemberID, m.ClientID, m.ClientHost)
		}
	}
	return true, tw.Flush()
}
