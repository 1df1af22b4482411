package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newClusterCmd() *cobra.Command {
	cf := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Inspect the cluster: brokers, controller, partition health",
	}
	cf.register(cmd.PersistentFlags())
	cmd.AddCommand(newClusterStatusCmd(cf))
	return cmd
}

// clusterStatus is what `gregor cluster status` reports.
// Its json tags are the structured (--output) form.
type clusterStatus struct {
	ClusterID    string         `json:"cluster_id"`
	ControllerID int32          `json:"controller_id"`
	Brokers      []statusBroker `json:"brokers"`
	// UnderReplicated have fewer in-sync replicas than replicas; Offline
	// have no leader.
	UnderReplicated []statusPartition `json:"under_replicated"`
	Offline         []statusPartition `json:"offline"`
	Partitions      int               `json:"partitions"`
}

type statusBroker struct {
	ID     int32  `json:"id"`
	Addr   string `json:"address"`
	Rack   string `json:"rack"`
	Fenced bool   `json:"fenced"`
}

type statusPartition struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Leader    int32   `json:"leader"`
	Replicas  []int32 `json:"replicas"`
	ISR       []int32 `json:"isr"`
}

func newClusterStatusCmd(cf *clusterFlags) *cobra.Command {
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show nodes, the active controller, fenced brokers, under-replicated and offline partitions",
		Long: `Show the cluster's nodes (live and fenced brokers with their addresses and racks),
the active controller, and the partitions that are under-replicated (fewer in-sync
replicas than replicas) or offline (no leader). Internal topics are included.
The exit status is 0 even when partitions are unhealthy; read the output.`,
		Example: `  gregor cluster status --bootstrap 127.0.0.1:9092,127.0.0.1:9192
  gregor cluster status -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			cl, err := cf.connect(ctx)
			if err != nil {
				return err
			}
			defer cl.Close()
			st, err := fetchClusterStatus(ctx, cl, kadm.NewClient(cl))
			if err != nil {
				return err
			}
			if output.structured() {
				return output.write(cmd.OutOrStdout(), st)
			}
			return printClusterStatus(cmd.OutOrStdout(), st)
		},
	}
	output = addOutputFlag(cmd)
	return cmd
}

func fetchClusterStatus(ctx context.Context, rq kmsg.Requestor, adm *kadm.Client) (*clusterStatus, error) {
	dreq := kmsg.NewPtrDescribeClusterRequest()
	dreq.IncludeFencedBrokers = true
	dresp, err := dreq.RequestWith(ctx, rq)
	if err != nil {
		return nil, fmt.Errorf("describe cluster: %w", err)
	}
	if err := kerr.ErrorForCode(dresp.ErrorCode); err != nil {
		msg := ""
		if dresp.ErrorMessage != nil {
			msg = ": " + *dresp.ErrorMessage
		}
		return nil, fmt.Errorf("describe cluster: %w%s", err, msg)
	}
	st := &clusterStatus{ClusterID: dresp.ClusterID, ControllerID: dresp.ControllerID, Brokers: []statusBroker{},
		UnderReplicated: []statusPartition{}, Offline: []statusPartition{}}
	for _, b := range dresp.Brokers {
		sb := statusBroker{ID: b.NodeID, Addr: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), Fenced: b.IsFenced}
		if b.Rack != nil {
			sb.Rack = *b.Rack
		}
		st.Brokers = append(st.Brokers, sb)
	}
	sort.Slice(st.Brokers, func(i, j int) bool { return st.Brokers[i].ID < st.Brokers[j].ID })

	tds, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	for _, name := range tds.Names() {
		td := tds[name]
		if td.Err != nil {
			return nil, fmt.Errorf("topic %q: %w", name, td.Err)
		}
		for _, pd := range td.Partitions.Sorted() {
			st.Partitions++
			sp := statusPartition{Topic: name, Partition: pd.Partition, Leader: pd.Leader, Replicas: nonNil(pd.Replicas), ISR: nonNil(pd.ISR)}
			if pd.Leader < 0 {
				st.Offline = append(st.Offline, sp)
			}
			if len(pd.ISR) < len(pd.Replicas) {
				st.UnderReplicated = append(st.UnderReplicated, sp)
			}
		}
	}
	return st, nil
}

func printClusterStatus(w io.Writer, st *clusterStatus) error {
	fenced := 0
	for _, b := range st.Brokers {
		if b.Fenced {
			fenced++
		}
	}
	fmt.Fprintf(w, "Cluster:     %s\n", st.ClusterID)
	fmt.Fprintf(w, "Controller:  %d\n", st.ControllerID)
	fmt.Fprintf(w, "Brokers:     %d live, %d fenced\n", len(st.Brokers)-fenced, fenced)
	fmt.Fprintf(w, "Partitions:  %d, %d under-replicated, %d offline\n\n", st.Partitions, len(st.UnderReplicated), len(st.Offline))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tADDRESS\tRACK\tSTATE")
	for _, b := range st.Brokers {
		state := "live"
		if b.Fenced {
			state = "fenced"
		}
		if b.ID == st.ControllerID {
			state += ", controller"
		}
		rack := b.Rack
		if rack == "" {
			rack = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", b.ID, b.Addr, rack, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sec := range []struct {
		title string
		parts []statusPartition
	}{{"Under-replicated partitions", st.UnderReplicated}, {"Offline partitions", st.Offline}} {
		if len(sec.parts) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", sec.title)
		fmt.Fprintln(tw, "TOPIC\tPARTITION\tLEADER\tREPLICAS\tISR")
		for _, p := range sec.parts {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%v\t%v\n", p.Topic, p.Partition, p.Leader, p.Replicas, p.ISR)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
