package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newTxnCmd() *cobra.Command {
	cf := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "txn",
		Short: "List and describe transactions, and abort a hanging one",
		Long: `Inspect transactional producers on a running cluster through the Kafka admin API.

"abort" writes an ABORT marker for a producer's open transaction on one
partition, as kafka-transactions.sh abort does: use it for a hanging
transaction whose coordinator no longer knows it (the partition's last stable
offset is stuck). The producer is found with DescribeProducers by the start
offset of its open transaction, or named with --producer-id.`,
		Example: `  gregor txn list
  gregor txn list --state Ongoing --min-duration 1m
  gregor txn describe payments-tx
  gregor txn abort --topic orders --partition 3 --start-offset 4711`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cf.register(cmd.PersistentFlags())
	cmd.AddCommand(newTxnListCmd(cf), newTxnDescribeCmd(cf), newTxnAbortCmd(cf))
	return cmd
}

func newTxnListCmd(cf *clusterFlags) *cobra.Command {
	var states []string
	var pids []int64
	var minDuration time.Duration
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List transactional ids with their producer id and state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			listed, err := adm.ListTransactions(ctx, pids, states)
			if err != nil {
				return fmt.Errorf("list transactions: %w", err)
			}
			ids := listed.TransactionalIDs()
			var described kadm.DescribedTransactions
			if len(ids) > 0 {
				if described, err = adm.DescribeTransactions(ctx, ids...); err != nil {
					return fmt.Errorf("describe transactions: %w", err)
				}
			}
			now := time.Now().UnixMilli()
			views := []txnSummary{}
			dst := cmd.OutOrStdout()
			if output.structured() {
				dst = io.Discard
			}
			tw := tabwriter.NewWriter(dst, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TRANSACTIONAL-ID\tPRODUCER-ID\tEPOCH\tSTATE\tOPEN-FOR")
			for _, l := range listed.Sorted() {
				d := described[l.TxnID]
				open := time.Duration(0)
				if d.Err == nil && d.StartTimestamp > 0 {
					open = time.Duration(now-d.StartTimestamp) * time.Millisecond
				}
				if minDuration > 0 && open < minDuration {
					continue
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", l.TxnID, l.ProducerID, d.ProducerEpoch, l.State, openFor(open))
				views = append(views, txnSummary{TransactionalID: l.TxnID, ProducerID: l.ProducerID,
					ProducerEpoch: d.ProducerEpoch, State: l.State, OpenForMs: durationMs(open)})
			}
			if output.structured() {
				return output.write(cmd.OutOrStdout(), views)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringArrayVar(&states, "state", nil, "only transactions in this state (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort); repeatable")
	cmd.Flags().Int64SliceVar(&pids, "producer-id", nil, "only these producer ids")
	cmd.Flags().DurationVar(&minDuration, "min-duration", 0, "only transactions open at least this long")
	output = addOutputFlag(cmd)
	return cmd
}

func openFor(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(time.Second).String()
}

func newTxnDescribeCmd(cf *clusterFlags) *cobra.Command {
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "describe TRANSACTIONAL-ID [TRANSACTIONAL-ID...]",
		Short: "Show a transaction's state, producer, timeout and partitions",
		Args:  argsAtLeastOne("TRANSACTIONAL-ID"),
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
			described, err := adm.DescribeTransactions(ctx, args...)
			if err != nil {
				return fmt.Errorf("describe transactions: %w", err)
			}
			w := cmd.OutOrStdout()
			if output.structured() {
				w = io.Discard
			}
			var failed error
			for _, id := range args {
				d, ok := described[id]
				if !ok || d.Err != nil {
					err := d.Err
					if !ok {
						err = errors.New("no answer")
					}
					failed = errors.Join(failed, fmt.Errorf("%s: %w", id, err))
					continue
				}
				fmt.Fprintf(w, "Transactional id: %s\nCoordinator:      %d\nState:            %s\nProducer:         id %d, epoch %d\nTimeout:          %s\n",
					d.TxnID, d.Coordinator, d.State, d.ProducerID, d.ProducerEpoch, time.Duration(d.TimeoutMillis)*time.Millisecond)
				if d.StartTimestamp > 0 {
					fmt.Fprintf(w, "Started:          %s\n", time.UnixMilli(d.StartTimestamp).UTC().Format(time.RFC3339))
				}
				var parts []string
				for _, t := range d.Topics.Sorted() {
					for _, p := range t.Partitions {
						parts = append(parts, fmt.Sprintf("%s-%d", t.Topic, p))
					}
				}
				fmt.Fprintf(w, "Partitions:       %s\n\n", dash(strings.Join(parts, ", ")))
			}
			if output.structured() {
				if err := output.write(cmd.OutOrStdout(), txnDescribeView(args, described)); err != nil {
					return err
				}
			}
			return failed
		},
	}
	output = addOutputFlag(cmd)
	return cmd
}

func newTxnAbortCmd(cf *clusterFlags) *cobra.Command {
	var topic string
	var partition int32
	var startOffset, producerID int64
	cmd := &cobra.Command{
		Use:   "abort",
		Short: "Abort a hanging transaction on one partition",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if topic == "" || partition < 0 {
				return usageError{errors.New("--topic and --partition are required")}
			}
			if (startOffset < 0) == (producerID < 0) {
				return usageError{errors.New("give exactly one of --start-offset and --producer-id")}
			}
			ctx := cmd.Context()
			adm, err := cf.connectAdmin(ctx)
			if err != nil {
				return err
			}
			defer adm.Close()
			set := kadm.TopicsSet{}
			set.Add(topic, partition)
			described, err := adm.DescribeProducers(ctx, set)
			if err != nil {
				return fmt.Errorf("describe producers: %w", err)
			}
			var target *kadm.DescribedProducer
			for _, p := range described.SortedProducers() {
				if p.Topic != topic || p.Partition != partition || p.CurrentTxnStartOffset < 0 {
					continue
				}
				if p.ProducerID == producerID || startOffset >= 0 && p.CurrentTxnStartOffset == startOffset {
					p := p
					target = &p
				}
			}
			if target == nil {
				return fmt.Errorf("no open transaction on %s-%d matches", topic, partition)
			}
			resps, err := adm.WriteTxnMarkers(ctx, kadm.TxnMarkers{ProducerID: target.ProducerID, ProducerEpoch: target.ProducerEpoch,
				CoordinatorEpoch: target.CoordinatorEpoch, Topics: set})
			if err != nil {
				return fmt.Errorf("write abort marker: %w", err)
			}
			var failed error
			resps.EachPartition(func(p kadm.TxnMarkersPartitionResponse) {
				if p.Err != nil {
					failed = errors.Join(failed, fmt.Errorf("%s-%d: %w", p.Topic, p.Partition, p.Err))
				}
			})
			if failed != nil {
				return failed
			}
			fmt.Fprintf(cmd.OutOrStdout(), "aborted the transaction of producer %d (epoch %d) on %s-%d, open since offset %d\n",
				target.ProducerID, target.ProducerEpoch, topic, partition, target.CurrentTxnStartOffset)
			return nil
		},
	}
	cmd.Flags().StringVar(&topic, "topic", "", "the partition's topic")
	cmd.Flags().Int32Var(&partition, "partition", -1, "the partition")
	cmd.Flags().Int64Var(&startOffset, "start-offset", -1, "the first offset of the open transaction (from gregor producers describe)")
	cmd.Flags().Int64Var(&producerID, "producer-id", -1, "the producer whose open transaction to abort")
	return cmd
}
