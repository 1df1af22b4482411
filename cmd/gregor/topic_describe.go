package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newTopicDescribeCmd(cf *clusterFlags) *cobra.Command {
	var internal bool
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "describe [TOPIC...]",
		Short: "Show partitions, leaders, replicas, offsets and configs of topics",
		Long: `Describe topics: for each partition its leader, leader epoch, replicas, in-sync
replicas (ISR), log start offset and log end offset (the high watermark), and the
topic's configs that differ from the broker defaults. Without TOPIC arguments,
every topic is described.`,
		Example: `  gregor topic describe orders
  gregor topic describe            # all topics`,
		ValidArgsFunction: completeTopics(cf),
		RunE: func(cmd *cobra.Command, topics []string) error {
			if err := output.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()

			var tds kadm.TopicDetails
			switch {
			case len(topics) > 0:
				tds, err = adm.ListTopicsWithInternal(ctx, topics...)
			case internal:
				tds, err = adm.ListTopicsWithInternal(ctx)
			default:
				tds, err = adm.ListTopics(ctx)
			}
			if err != nil {
				return fmt.Errorf("describe topics: %w", err)
			}
			if len(topics) == 0 {
				topics = tds.Names()
			}
			var (
				errs []error
				ok   []string
			)
			for _, t := range topics {
				td, found := tds[t]
				switch {
				case !found:
					errs = append(errs, fmt.Errorf("topic %q: missing from the broker's answer", t))
				case td.Err != nil:
					errs = append(errs, topicError(t, td.Err, ""))
				default:
					ok = append(ok, t)
				}
			}
			stderr := cmd.ErrOrStderr()
			var info describeInfo
			if len(ok) > 0 {
				info = fetchDescribeInfo(cmd, adm, ok)
			}
			out := cmd.OutOrStdout()
			if output.structured() {
				views := make([]topicView, 0, len(ok))
				for _, t := range ok {
					views = append(views, topicDescribeView(tds[t], info))
				}
				if err := output.write(out, views); err != nil {
					return err
				}
				return multiError(stderr, "topic descriptions", len(topics), errs)
			}
			for i, t := range ok {
				if i > 0 {
					fmt.Fprintln(out)
				}
				if err := writeTopicDescription(out, tds[t], info); err != nil {
					return err
				}
			}
			return multiError(stderr, "topic descriptions", len(topics), errs)
		},
	}
	cmd.Flags().BoolVar(&internal, "internal", false, "with no TOPIC, include internal topics")
	output = addOutputFlag(cmd)
	return cmd
}

// describeInfo is what describe needs beyond metadata. A part the broker
// could not answer is nil and is shown as "-", with a warning on stderr.
type describeInfo struct {
	starts, ends kadm.ListedOffsets
	configs      map[string]kadm.ResourceConfig
}

func fetchDescribeInfo(cmd *cobra.Command, adm *kadm.Client, topics []string) describeInfo {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	var info describeInfo
	var err error
	if info.starts, err = adm.ListStartOffsets(ctx, topics...); err != nil {
		fmt.Fprintf(stderr, "gregor: warning: cannot list log start offsets: %v\n", err)
		info.starts = nil
	}
	if info.ends, err = adm.ListEndOffsets(ctx, topics...); err != nil {
		fmt.Fprintf(stderr, "gregor: warning: cannot list log end offsets: %v\n", err)
		info.ends = nil
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		fmt.Fprintf(stderr, "gregor: warning: cannot describe configs: %v\n", err)
		return info
	}
	info.configs = make(map[string]kadm.ResourceConfig, len(rcs))
	for _, rc := range rcs {
		if rc.Err != nil {
			fmt.Fprintf(stderr, "gregor: warning: %v\n", topicError(rc.Name, rc.Err, rc.ErrMessage))
			continue
		}
		info.configs[rc.Name] = rc
	}
	return info
}

// writeTopicDescription prints one topic's block.
func writeTopicDescription(w io.Writer, td kadm.TopicDetail, info describeInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Topic:\t%s\n", td.Topic)
	if td.ID != (kadm.TopicID{}) {
		// Kafka prints topic IDs as unpadded URL-safe base64.
		fmt.Fprintf(tw, "ID:\t%s\n", base64.RawURLEncoding.EncodeToString(td.ID[:]))
	}
	if td.IsInternal {
		fmt.Fprintf(tw, "Internal:\ttrue\n")
	}
	fmt.Fprintf(tw, "Partitions:\t%d\n", len(td.Partitions))
	fmt.Fprintf(tw, "Replication factor:\t%d\n", td.Partitions.NumReplicas())
	switch rc, ok := info.configs[td.Topic]; {
	case info.configs == nil || !ok:
		fmt.Fprintf(tw, "Configs:\t-\n")
	default:
		overrides := topicOverrides(rc)
		if len(overrides) == 0 {
			fmt.Fprintf(tw, "Configs:\t(none; broker defaults apply)\n")
		}
		for i, c := range overrides {
			label := ""
			if i == 0 {
				label = "Configs:"
			}
			fmt.Fprintf(tw, "%s\t%s\n", label, c)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)

	// The ERROR column appears only when a partition has a problem.
	parts := td.Partitions.Sorted()
	problems := make([]string, len(parts))
	anyProblem := false
	for i, p := range parts {
		var msg []string
		if p.Err != nil {
			msg = append(msg, p.Err.Error())
		}
		if len(p.OfflineReplicas) > 0 {
			msg = append(msg, "offline replicas: "+joinInt32s(p.OfflineReplicas))
		}
		problems[i] = strings.Join(msg, "; ")
		anyProblem = anyProblem || problems[i] != ""
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "PARTITION\tLEADER\tEPOCH\tREPLICAS\tISR\tLOG-START\tLOG-END"
	if anyProblem {
		header += "\tERROR"
	}
	fmt.Fprintln(tw, header)
	for i, p := range parts {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%s",
			p.Partition, p.Leader, p.LeaderEpoch, joinInt32s(p.Replicas), joinInt32s(p.ISR),
			listedOffset(info.starts, td.Topic, p.Partition), listedOffset(info.ends, td.Topic, p.Partition))
		if anyProblem {
			fmt.Fprintf(tw, "\t%s", problems[i])
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// topicOverrides lists key=value for configs set on the topic itself, sorted.
func topicOverrides(rc kadm.ResourceConfig) []string {
	var out []string
	for _, c := range rc.Configs {
		if c.Source != kmsg.ConfigSourceDynamicTopicConfig {
			continue
		}
		v := c.MaybeValue()
		if c.Sensitive {
			v = "(sensitive)"
		}
		out = append(out, c.Key+"="+v)
	}
	sort.Strings(out)
	return out
}

func listedOffset(l kadm.ListedOffsets, topic string, p int32) string {
	o, ok := l.Lookup(topic, p)
	if !ok {
		return "-"
	}
	if o.Err != nil {
		return "error: " + o.Err.Error()
	}
	return strconv.FormatInt(o.Offset, 10)
}

func joinInt32s(xs []int32) string {
	if len(xs) == 0 {
		return "-"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(int64(x), 10)
	}
	return strings.Join(parts, ",")
}
