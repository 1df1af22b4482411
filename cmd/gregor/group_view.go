package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
)

// groupView is one described group, classic or KIP-848, as group describe
// prints it in any --output format.
type groupView struct {
	Group    string `json:"group"`
	State    string `json:"state"`
	Protocol string `json:"protocol"`
	// Epoch is the group epoch of a KIP-848 consumer group.
	Epoch      *int32               `json:"epoch,omitempty"`
	Members    []groupMemberView    `json:"members"`
	Partitions []groupPartitionView `json:"partitions"`
}

type groupMemberView struct {
	MemberID string `json:"member_id"`
	ClientID string `json:"client_id"`
	Host     string `json:"host"`
}

// groupPartitionView is a partition the group consumes or has committed;
// an unknown offset or lag is null.
type groupPartitionView struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	LogEndOffset  *int64 `json:"log_end_offset"`
	Lag           *int64 `json:"lag"`
	MemberID      string `json:"member_id,omitempty"`
}

// groupLagView builds the view of a classic group from kadm's lag.
func groupLagView(l kadm.DescribedGroupLag) groupView {
	protocol := l.ProtocolType
	if l.Protocol != "" {
		protocol += "/" + l.Protocol
	}
	v := groupView{Group: l.Group, State: l.State, Protocol: protocol, Members: []groupMemberView{},
		Partitions: []groupPartitionView{}}
	for _, m := range l.Members {
		v.Members = append(v.Members, groupMemberView{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
	}
	for _, ml := range l.Lag.Sorted() {
		p := groupPartitionView{Topic: ml.Topic, Partition: ml.Partition}
		if ml.Member != nil {
			p.MemberID = ml.Member.MemberID
		}
		if ml.Commit.At >= 0 {
			p.CurrentOffset = int64Ptr(ml.Commit.At)
		}
		if ml.End.Err == nil {
			p.LogEndOffset = int64Ptr(ml.End.Offset)
		}
		if ml.Err == nil && ml.Lag >= 0 {
			p.Lag = int64Ptr(ml.Lag)
		}
		v.Partitions = append(v.Partitions, p)
	}
	sortMembers(v.Members)
	return v
}

func int64Ptr(x int64) *int64 { return &x }

func sortMembers(ms []groupMemberView) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].MemberID < ms[j].MemberID })
}

func optInt64(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// writeGroupView prints one group: a header, then one line per partition
// with its consuming member, then members that consume nothing.
func writeGroupView(w io.Writer, v groupView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP\t%s\nSTATE\t%s\nPROTOCOL\t%s\n", v.Group, v.State, dash(v.Protocol))
	if v.Epoch != nil {
		fmt.Fprintf(tw, "EPOCH\t%d\n", *v.Epoch)
	}
	fmt.Fprintf(tw, "MEMBERS\t%d\n\n", len(v.Members))
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tMEMBER-ID\tCLIENT-ID\tHOST")
	byID := make(map[string]groupMemberView, len(v.Members))
	for _, m := range v.Members {
		byID[m.MemberID] = m
	}
	consuming := map[string]bool{}
	for _, p := range v.Partitions {
		member, client, host := "-", "-", "-"
		if p.MemberID != "" {
			m := byID[p.MemberID]
			member, client, host = p.MemberID, m.ClientID, m.Host
			consuming[p.MemberID] = true
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Topic, p.Partition, optInt64(p.CurrentOffset),
			optInt64(p.LogEndOffset), optInt64(p.Lag), member, client, host)
	}
	for _, m := range v.Members {
		if !consuming[m.MemberID] {
			fmt.Fprintf(tw, "-\t-\t-\t-\t-\t%s\t%s\t%s\n", m.MemberID, m.ClientID, m.Host)
		}
	}
	return tw.Flush()
}
