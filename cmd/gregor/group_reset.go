package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// resetTarget is where reset-offsets moves each partition.
type resetTarget struct {
	kind  string // earliest, latest, offset, timestamp, shift
	value int64
}

// partitionSpec is a --topic value: a topic and optionally some partitions.
type partitionSpec struct {
	topic      string
	partitions []int32 // nil: every partition
}

// parsePartitionSpec parses "topic" or "topic:0,2,5".
func parsePartitionSpec(s string) (partitionSpec, error) {
	topic, list, hasList := strings.Cut(s, ":")
	if topic == "" {
		return partitionSpec{}, usagef("--topic %q: empty topic name", s)
	}
	spec := partitionSpec{topic: topic}
	if !hasList {
		return spec, nil
	}
	for _, p := range strings.Split(list, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil || n < 0 {
			return partitionSpec{}, usagef("--topic %q: %q is not a partition number", s, p)
		}
		spec.partitions = append(spec.partitions, int32(n))
	}
	return spec, nil
}

// parseDatetime accepts RFC 3339 with or without a zone (UTC then) and
// with or without seconds.
func parseDatetime(s string) (int64, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, usagef("--to-datetime %q: want a time like 2026-01-31T15:04:05Z", s)
}

func newGroupResetCmd(cf *clusterFlags) *cobra.Command {
	var (
		topics                []string
		allTopics, execute    bool
		toEarliest, toLatest  bool
		toOffset, toTimestamp int64
		shiftBy               int64
		toDatetime            string
		output                *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "reset-offsets GROUP (--topic TOPIC[:P,P...]... | --all-topics) TARGET [--execute]",
		Short: "Move a group's committed offsets (a dry run unless --execute)",
		Long: `Compute new committed offsets for a group and, with --execute, commit them.
The group must have no members: stop its consumers first.

Exactly one target is needed: --to-earliest, --to-latest, --to-offset N,
--to-timestamp MS (the first record at or after that Unix time in
milliseconds, else the log end), --to-datetime TIME, or --shift-by N (from the
committed offset). Offsets are kept within each partition's log start and log
end offsets. --all-topics resets every topic the group has committed offsets for.`,
		Example: `  gregor group reset-offsets billing --topic invoices --to-earliest
  gregor group reset-offsets billing --topic invoices:0,3 --to-offset 1200 --execute
  gregor group reset-offsets billing --all-topics --to-datetime 2026-01-31T00:00:00Z --execute`,
		Args:              argsOne("GROUP"),
		ValidArgsFunction: completeOne(completeGroups(cf)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.check(); err != nil {
				return err
			}
			group := args[0]
			var targets []resetTarget
			if toEarliest {
				targets = append(targets, resetTarget{kind: "earliest"})
			}
			if toLatest {
				targets = append(targets, resetTarget{kind: "latest"})
			}
			if cmd.Flags().Changed("to-offset") {
				if toOffset < 0 {
					return usagef("--to-offset must not be negative, got %d", toOffset)
				}
				targets = append(targets, resetTarget{kind: "offset", value: toOffset})
			}
			if cmd.Flags().Changed("to-timestamp") {
				targets = append(targets, resetTarget{kind: "timestamp", value: toTimestamp})
			}
			if toDatetime != "" {
				ms, err := parseDatetime(toDatetime)
				if err != nil {
					return err
				}
				targets = append(targets, resetTarget{kind: "timestamp", value: ms})
			}
			if cmd.Flags().Changed("shift-by") {
				targets = append(targets, resetTarget{kind: "shift", value: shiftBy})
			}
			if len(targets) != 1 {
				return usagef("give exactly one of --to-earliest, --to-latest, --to-offset, --to-timestamp, --to-datetime, --shift-by")
			}
			if allTopics == (len(topics) > 0) {
				return usagef("give either --topic (repeatable) or --all-topics")
			}
			var specs []partitionSpec
			for _, s := range topics {
				spec, err := parsePartitionSpec(s)
				if err != nil {
					return err
				}
				specs = append(specs, spec)
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			plan, err := planReset(ctx, adm, group, specs, targets[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if output.structured() {
				out = io.Discard
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT-OFFSET\tNEW-OFFSET")
			for _, p := range plan {
				cur := "-"
				if p.current >= 0 {
					cur = strconv.FormatInt(p.current, 10)
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%d\n", p.topic, p.partition, cur, p.next)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if !execute {
				fmt.Fprintln(cmd.ErrOrStderr(), "dry run: nothing was committed; add --execute to commit these offsets")
				if output.structured() {
					return output.write(cmd.OutOrStdout(), resetView(group, false, plan))
				}
				return nil
			}
			var os kadm.Offsets
			for _, p := range plan {
				os.AddOffset(p.topic, p.partition, p.next, -1)
			}
			resps, err := adm.CommitOffsets(ctx, group, os)
			if err != nil {
				return groupError(group, err)
			}
			if err := resps.Error(); err != nil {
				return groupError(group, err)
			}
			if output.structured() {
				return output.write(cmd.OutOrStdout(), resetView(group, true, plan))
			}
			fmt.Fprintf(out, "committed %d offsets for group %q\n", len(plan), group)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&topics, "topic", nil, "a topic, or topic:partition,partition,...; repeatable")
	f.BoolVar(&allTopics, "all-topics", false, "every topic the group has committed offsets for")
	f.BoolVar(&toEarliest, "to-earliest", false, "reset to the log start offset")
	f.BoolVar(&toLatest, "to-latest", false, "reset to the log end offset")
	f.Int64Var(&toOffset, "to-offset", 0, "reset to this offset")
	f.Int64Var(&toTimestamp, "to-timestamp", 0, "reset to the first record at or after this Unix time in milliseconds")
	f.StringVar(&toDatetime, "to-datetime", "", "reset to the first record at or after this time (RFC 3339)")
	f.Int64Var(&shiftBy, "shift-by", 0, "move the committed offset by this many records (negative: back)")
	f.BoolVar(&execute, "execute", false, "commit the new offsets (without it, only print them)")
	_ = cmd.RegisterFlagCompletionFunc("topic", completeTopics(cf))
	output = addOutputFlag(cmd)
	return cmd
}

// groupResetView is the structured form of reset-offsets: the plan, and
// whether it was committed.
type groupResetView struct {
	Group     string              `json:"group"`
	Committed bool                `json:"committed"`
	Offsets   []groupResetOffsets `json:"offsets"`
}

type groupResetOffsets struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// CurrentOffset is null when the group had no commit there.
	CurrentOffset *int64 `json:"current_offset"`
	NewOffset     int64  `json:"new_offset"`
}

func resetView(group string, committed bool, plan []resetPlan) groupResetView {
	v := groupResetView{Group: group, Committed: committed, Offsets: []groupResetOffsets{}}
	for _, p := range plan {
		o := groupResetOffsets{Topic: p.topic, Partition: p.partition, NewOffset: p.next}
		if p.current >= 0 {
			cur := p.current
			o.CurrentOffset = &cur
		}
		v.Offsets = append(v.Offsets, o)
	}
	return v
}

// resetPlan is one partition's move.
type resetPlan struct {
	topic         string
	partition     int32
	current, next int64
}

// planReset checks that the group is inactive and computes the new offsets.
func planReset(ctx context.Context, adm *kadm.Client, group string, specs []partitionSpec, target resetTarget) ([]resetPlan, error) {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return nil, groupError(group, err)
	}
	if d, ok := described[group]; ok {
		if d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
			return nil, groupError(group, d.Err)
		}
		if len(d.Members) > 0 {
			return nil, fmt.Errorf("group %q has %d active members (state %s): offsets can only be reset while it has none", group, len(d.Members), d.State)
		}
	}
	// A consumer group of the KIP-848 protocol is not a classic group:
	// DescribeGroups does not show its members.
	if cd, err := adm.DescribeConsumerGroups(ctx, group); err == nil {
		if d, ok := cd[group]; ok && d.Err == nil && len(d.Members) > 0 {
			return nil, fmt.Errorf("group %q has %d active members (state %s): offsets can only be reset while it has none", group, len(d.Members), d.State)
		}
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, groupError(group, err)
	}
	if len(specs) == 0 {
		seen := map[string]bool{}
		committed.Each(func(o kadm.OffsetResponse) {
			if !seen[o.Topic] {
				seen[o.Topic] = true
				specs = append(specs, partitionSpec{topic: o.Topic})
			}
		})
		if len(specs) == 0 {
			return nil, fmt.Errorf("group %q has no committed offsets; name topics with --topic", group)
		}
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.topic)
	}
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list log start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list log end offsets: %w", err)
	}
	var byTime kadm.ListedOffsets
	if target.kind == "timestamp" {
		if byTime, err = adm.ListOffsetsAfterMilli(ctx, target.value, names...); err != nil {
			return nil, fmt.Errorf("list offsets by time: %w", err)
		}
	}
	var plan []resetPlan
	for _, s := range specs {
		parts := s.partitions
		if parts == nil {
			for p := range ends[s.topic] {
				parts = append(parts, p)
			}
			sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
		}
		if len(parts) == 0 {
			return nil, topicError(s.topic, kerr.UnknownTopicOrPartition, "")
		}
		for _, p := range parts {
			start, okS := starts.Lookup(s.topic, p)
			end, okE := ends.Lookup(s.topic, p)
			if !okS || !okE || start.Err != nil || end.Err != nil {
				err := start.Err
				if err == nil {
					err = end.Err
				}
				if err == nil {
					err = kerr.UnknownTopicOrPartition
				}
				return nil, fmt.Errorf("%s partition %d: %w", s.topic, p, err)
			}
			cur := int64(-1)
			if o, ok := committed.Lookup(s.topic, p); ok && o.Err == nil {
				cur = o.At
			}
			next, err := resetOffset(target, cur, start.Offset, end.Offset, byTime, s.topic, p)
			if err != nil {
				return nil, err
			}
			plan = append(plan, resetPlan{topic: s.topic, partition: p, current: cur, next: next})
		}
	}
	return plan, nil
}

// resetOffset computes one partition's new offset, kept in [start, end].
func resetOffset(t resetTarget, current, start, end int64, byTime kadm.ListedOffsets, topic string, p int32) (int64, error) {
	var next int64
	switch t.kind {
	case "earliest":
		next = start
	case "latest":
		next = end
	case "offset":
		next = t.value
	case "timestamp":
		next = end
		if o, ok := byTime.Lookup(topic, p); ok && o.Err == nil && o.Offset >= 0 {
			next = o.Offset
		}
	case "shift":
		if current < 0 {
			return 0, fmt.Errorf("%s partition %d: the group has no committed offset to shift", topic, p)
		}
		next = current + t.value
	}
	return min(max(next, start), end), nil
}
