package main

import (
	"errors"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func newTopicCmd() *cobra.Command {
	cf := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "topic",
		Short: "Create, list, describe, alter and delete topics",
		Long: `Manage topics on a running cluster through the Kafka admin API.

Topic configs use Kafka's names (retention.ms, cleanup.policy, segment.bytes,
max.message.bytes, min.insync.replicas, ...).`,
		Example: `  gregor topic create orders --partitions 6 --config retention.ms=86400000
  gregor topic list
  gregor topic describe orders
  gregor topic alter orders --partitions 12 --delete-config retention.ms
  gregor topic delete orders`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cf.register(cmd.PersistentFlags())
	cmd.AddCommand(
		newTopicCreateCmd(cf),
		newTopicListCmd(cf),
		newTopicDescribeCmd(cf),
		newTopicAlterCmd(cf),
		newTopicDeleteCmd(cf),
	)
	return cmd
}

func newTopicCreateCmd(cf *clusterFlags) *cobra.Command {
	var (
		partitions  int32
		replication int16
		configs     []string
		ifNotExists bool
	)
	cmd := &cobra.Command{
		Use:   "create TOPIC [TOPIC...]",
		Short: "Create topics",
		Long: `Create one or more topics with the same partition count, replication factor
and configs. Without --partitions or --replication-factor the broker's defaults
apply (topics.default_partitions and topics.default_replication_factor).`,
		Example: `  gregor topic create orders
  gregor topic create orders payments --partitions 3 --replication-factor 1
  gregor topic create compacted --config cleanup.policy=compact --config segment.bytes=1048576`,
		Args: argsAtLeastOne("TOPIC"),
		RunE: func(cmd *cobra.Command, topics []string) error {
			p, rf := int32(-1), int16(-1) // -1: the broker's default (CreateTopics v4+)
			if cmd.Flags().Changed("partitions") {
				if partitions < 1 {
					return usagef("--partitions must be at least 1, got %d", partitions)
				}
				p = partitions
			}
			if cmd.Flags().Changed("replication-factor") {
				if replication < 1 {
					return usagef("--replication-factor must be at least 1, got %d", replication)
				}
				rf = replication
			}
			kvs, err := parseKeyValues("config", configs, true)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			resps, err := adm.CreateTopics(ctx, p, rf, configMap(kvs), topics...)
			if err != nil {
				return fmt.Errorf("create topics: %w", err)
			}
			out := cmd.OutOrStdout()
			var errs []error
			for _, t := range topics {
				r, ok := resps[t]
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("topic %q: missing from the broker's answer", t))
				case r.Err != nil && ifNotExists && errors.Is(r.Err, kerr.TopicAlreadyExists):
					fmt.Fprintf(out, "topic %q already exists\n", t)
				case r.Err != nil:
					errs = append(errs, topicError(t, r.Err, r.ErrMessage))
				case r.NumPartitions > 0 && r.ReplicationFactor > 0:
					fmt.Fprintf(out, "created topic %q (%s, replication factor %d)\n",
						t, plural(int64(r.NumPartitions), "partition"), r.ReplicationFactor)
				default:
					fmt.Fprintf(out, "created topic %q\n", t)
				}
			}
			return multiError(cmd.ErrOrStderr(), "topic creations", len(topics), errs)
		},
	}
	f := cmd.Flags()
	f.Int32VarP(&partitions, "partitions", "p", 0, "number of partitions (default: the broker's default)")
	f.Int16VarP(&replication, "replication-factor", "r", 0, "replicas per partition (default: the broker's default)")
	f.StringArrayVarP(&configs, "config", "c", nil, "topic config key=value; repeat for several")
	f.BoolVar(&ifNotExists, "if-not-exists", false, "succeed when the topic already exists")
	return cmd
}

func newTopicListCmd(cf *clusterFlags) *cobra.Command {
	var internal bool
	var out *outputFlag
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics",
		Long:  `List topics with their partition count and replication factor, sorted by name.`,
		Example: `  gregor topic list
  gregor topic list --internal    # include __consumer_offsets and friends`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			var tds kadm.TopicDetails
			if internal {
				tds, err = adm.ListTopicsWithInternal(ctx)
			} else {
				tds, err = adm.ListTopics(ctx)
			}
			if err != nil {
				return fmt.Errorf("list topics: %w", err)
			}
			if out.structured() {
				return out.write(cmd.OutOrStdout(), topicListView(tds))
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tREPLICATION-FACTOR")
			for _, td := range tds.Sorted() {
				if td.Err != nil {
					fmt.Fprintf(tw, "%s\t-\t-\t%v\n", td.Topic, td.Err)
					continue
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\n", td.Topic, len(td.Partitions), td.Partitions.NumReplicas())
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&internal, "internal", false, "include internal topics")
	out = addOutputFlag(cmd)
	return cmd
}

func newTopicDeleteCmd(cf *clusterFlags) *cobra.Command {
	var ifExists bool
	cmd := &cobra.Command{
		Use:   "delete TOPIC [TOPIC...]",
		Short: "Delete topics and all their records",
		Example: `  gregor topic delete orders
  gregor topic delete --if-exists scratch-1 scratch-2`,
		Args:              argsAtLeastOne("TOPIC"),
		ValidArgsFunction: completeTopics(cf),
		RunE: func(cmd *cobra.Command, topics []string) error {
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			resps, err := adm.DeleteTopics(ctx, topics...)
			if err != nil {
				return fmt.Errorf("delete topics: %w", err)
			}
			out := cmd.OutOrStdout()
			var errs []error
			for _, t := range topics {
				r, ok := resps[t]
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("topic %q: missing from the broker's answer", t))
				case r.Err != nil && ifExists && isUnknownTopic(r.Err):
					fmt.Fprintf(out, "topic %q does not exist\n", t)
				case r.Err != nil:
					errs = append(errs, topicError(t, r.Err, r.ErrMessage))
				default:
					fmt.Fprintf(out, "deleted topic %q\n", t)
				}
			}
			return multiError(cmd.ErrOrStderr(), "topic deletions", len(topics), errs)
		},
	}
	cmd.Flags().BoolVar(&ifExists, "if-exists", false, "succeed when the topic does not exist")
	return cmd
}

func newTopicAlterCmd(cf *clusterFlags) *cobra.Command {
	var (
		partitions int32
		set        []string
		del        []string
	)
	cmd := &cobra.Command{
		Use:   "alter TOPIC",
		Short: "Change a topic's configs or add partitions",
		Long: `Change a topic's configs (incrementally: configs not named keep their value)
or raise its partition count. As in Kafka, partitions can be added but never
removed, and adding partitions changes which partition a key maps to.`,
		Example: `  gregor topic alter orders --config retention.ms=3600000 --config cleanup.policy=compact
  gregor topic alter orders --delete-config retention.ms      # back to the broker default
  gregor topic alter orders --partitions 12`,
		Args:              argsOne("TOPIC"),
		ValidArgsFunction: completeOne(completeTopics(cf)),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			changePartitions := cmd.Flags().Changed("partitions")
			if changePartitions && partitions < 1 {
				return usagef("--partitions must be at least 1, got %d", partitions)
			}
			if !changePartitions && len(set) == 0 && len(del) == 0 {
				return usagef("nothing to change: give --config, --delete-config or --partitions")
			}
			kvs, err := parseKeyValues("config", set, true)
			if err != nil {
				return err
			}
			alters := make([]kadm.AlterConfig, 0, len(kvs)+len(del))
			named := make(map[string]bool, len(kvs)+len(del))
			for _, kv := range kvs {
				v := kv.value
				alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: kv.key, Value: &v})
				named[kv.key] = true
			}
			for _, k := range del {
				if k == "" {
					return usagef("--delete-config: empty key")
				}
				if named[k] {
					return usagef("config %q is both set and deleted", k)
				}
				named[k] = true
				alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
			}

			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			out := cmd.OutOrStdout()

			tds, err := adm.ListTopicsWithInternal(ctx, topic)
			if err != nil {
				return fmt.Errorf("describe topic %q: %w", topic, err)
			}
			td := tds[topic]
			if td.Err != nil {
				return topicError(topic, td.Err, "")
			}
			current := int32(len(td.Partitions))
			if changePartitions && partitions < current {
				return fmt.Errorf("topic %q has %d partitions; cannot reduce to %d (partitions can only be added)",
					topic, current, partitions)
			}

			if len(alters) > 0 {
				resps, err := adm.AlterTopicConfigs(ctx, alters, topic)
				if err != nil {
					return fmt.Errorf("alter configs of topic %q: %w", topic, err)
				}
				r, err := resps.On(topic, nil)
				if err != nil {
					return fmt.Errorf("topic %q: missing from the broker's answer", topic)
				}
				if r.Err != nil {
					return topicError(topic, r.Err, r.ErrMessage)
				}
				for _, kv := range kvs {
					fmt.Fprintf(out, "topic %q: set %s=%s\n", topic, kv.key, kv.value)
				}
				sorted := append([]string(nil), del...)
				sort.Strings(sorted)
				for _, k := range sorted {
					fmt.Fprintf(out, "topic %q: deleted %s (back to the default)\n", topic, k)
				}
			}

			if changePartitions {
				if partitions == current {
					fmt.Fprintf(out, "topic %q already has %d partitions\n", topic, current)
					return nil
				}
				resps, err := adm.UpdatePartitions(ctx, int(partitions), topic)
				if err != nil {
					return fmt.Errorf("add partitions to topic %q: %w", topic, err)
				}
				r, ok := resps[topic]
				if !ok {
					return fmt.Errorf("topic %q: missing from the broker's answer", topic)
				}
				if r.Err != nil {
					return topicError(topic, r.Err, r.ErrMessage)
				}
				fmt.Fprintf(out, "topic %q: partitions %d -> %d\n", topic, current, partitions)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Int32VarP(&partitions, "partitions", "p", 0, "new total partition count (must not be lower than the current one)")
	f.StringArrayVarP(&set, "config", "c", nil, "set topic config key=value; repeat for several")
	f.StringArrayVar(&del, "delete-config", nil, "remove a topic config override; repeat for several")
	return cmd
}
