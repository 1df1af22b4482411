package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

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
	// Quorum is the metadata quorum (DescribeQuorum); nil when the
	// cluster does not answer it.
	Quorum *statusQuorum `json:"quorum,omitempty"`
}

// statusQuorum is the metadata log's raft state, as kafka-metadata-quorum
// describe --status and --replication show it.
type statusQuorum struct {
	LeaderID      int32           `json:"leader_id"`
	LeaderEpoch   int32           `json:"leader_epoch"`
	HighWatermark int64           `json:"high_watermark"`
	Replicas      []statusReplica `json:"replicas"`
}

type statusReplica struct {
	ID           int32  `json:"id"`
	Status       string `json:"status"` // Leader, Follower or Observer
	LogEndOffset int64  `json:"log_end_offset"`
	Lag          int64  `json:"lag"`
	// Timestamps in Unix milliseconds; -1 when unknown.
	LastFetchTimestamp    int64 `json:"last_fetch_timestamp"`
	LastCaughtUpTimestamp int64 `json:"last_caught_up_timestamp"`
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
	q, err := fetchQuorum(ctx, rq)
	if err != nil {
		return nil, err
	}
	st.Quorum = q
	return st, nil
}

// fetchQuorum describes the metadata quorum; a cluster that does not
// serve DescribeQuorum gives nil.
func fetchQuorum(ctx context.Context, rq kmsg.Requestor) (*statusQuorum, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, rq)
	if errors.Is(err, kerr.UnsupportedVersion) || errors.Is(err, kerr.ClusterAuthorizationFailed) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("describe quorum: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.ClusterAuthorizationFailed) {
			return nil, nil
		}
		return nil, fmt.Errorf("describe quorum: %w", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("describe quorum: %d topics in the answer, want 1", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, fmt.Errorf("describe quorum: %w", err)
	}
	q := &statusQuorum{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark, Replicas: []statusReplica{}}
	var leaderEnd int64
	for _, v := range p.CurrentVoters {
		if v.ReplicaID == p.LeaderID {
			leaderEnd = v.LogEndOffset
		}
	}
	add := func(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState, role string) {
		for _, r := range rs {
			status := role
			if r.ReplicaID == p.LeaderID {
				status = "Leader"
			}
			q.Replicas = append(q.Replicas, statusReplica{ID: r.ReplicaID, Status: status, LogEndOffset: r.LogEndOffset,
				Lag: max(leaderEnd-r.LogEndOffset, 0), LastFetchTimestamp: r.LastFetchTimestamp, LastCaughtUpTimestamp: r.LastCaughtUpTimestamp})
		}
	}
	add(p.CurrentVoters, "Follower")
	add(p.Observers, "Observer")
	return q, nil
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
	if q := st.Quorum; q != nil {
		fmt.Fprintf(w, "\nMetadata quorum: leader %d, epoch %d, high watermark %d\n", q.LeaderID, q.LeaderEpoch, q.HighWatermark)
		fmt.Fprintln(tw, "NODE\tSTATUS\tLOG END OFFSET\tLAG\tLAST FETCH\tLAST CAUGHT UP")
		for _, r := range q.Replicas {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\n", r.ID, r.Status, r.LogEndOffset, r.Lag, msAgo(r.LastFetchTimestamp), msAgo(r.LastCaughtUpTimestamp))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
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

// msAgo shows a Unix-millisecond timestamp as its age; -1 is unknown.
func msAgo(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return fmt.Sprintf("%d ms ago", max(time.Now().UnixMilli()-ms, 0))
}
