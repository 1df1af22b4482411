package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newProducersCmd() *cobra.Command {
	cf := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "producers",
		Short: "Show the idempotent and transactional producers of partitions",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cf.register(cmd.PersistentFlags())
	cmd.AddCommand(newProducersDescribeCmd(cf))
	return cmd
}

func newProducersDescribeCmd(cf *clusterFlags) *cobra.Command {
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "describe TOPIC",
		Short: "List each partition's active producers: id, epoch, last sequence and open transaction",
		Example: `  gregor producers describe orders
  gregor producers describe orders -o json`,
		Args:              argsOne("TOPIC"),
		ValidArgsFunction: completeTopics(cf),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			md, err := adm.Metadata(ctx, args[0])
			if err != nil {
				return fmt.Errorf("metadata: %w", err)
			}
			t, ok := md.Topics[args[0]]
			if !ok {
				return fmt.Errorf("topic %q: not in the broker's metadata", args[0])
			}
			if t.Err != nil {
				return topicError(args[0], t.Err, "")
			}
			set := kadm.TopicsSet{}
			for p := range t.Partitions {
				set.Add(args[0], p)
			}
			described, err := adm.DescribeProducers(ctx, set)
			if err != nil {
				return fmt.Errorf("describe producers: %w", err)
			}
			if output.structured() {
				return output.write(cmd.OutOrStdout(), producersView(described))
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PARTITION\tPRODUCER-ID\tEPOCH\tLAST-SEQUENCE\tLAST-TIMESTAMP\tCOORDINATOR-EPOCH\tOPEN-TXN-START")
			for _, p := range described.SortedPartitions() {
				if p.Err != nil {
					fmt.Fprintf(tw, "%d\terror: %v\t\t\t\t\t\n", p.Partition, p.Err)
					continue
				}
				for _, pr := range p.ActiveProducers.Sorted() {
					ts := "-"
					if pr.LastTimestamp >= 0 {
						ts = time.UnixMilli(pr.LastTimestamp).UTC().Format(time.RFC3339)
					}
					open := "-"
					if pr.CurrentTxnStartOffset >= 0 {
						open = fmt.Sprint(pr.CurrentTxnStartOffset)
					}
					fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%d\t%s\n", p.Partition, pr.ProducerID, pr.ProducerEpoch,
						pr.LastSequence, ts, pr.CoordinatorEpoch, open)
				}
			}
			return tw.Flush()
		},
	}
	output = addOutputFlag(cmd)
	return cmd
}
