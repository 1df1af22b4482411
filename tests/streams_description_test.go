package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestStreamsGroupTopologyDescriptionUpdate: the broker asks a member of a
// streams group for the topology description (KIP-1331), keeps what the
// member sends for the group's topology epoch and shows it in
// StreamsGroupDescribe v1.
func TestStreamsGroupTopologyDescriptionUpdate(t *testing.T) {
	b := startBroker(t, groupConfig)
	const group = "desc-app"
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.MaxVersions(kversion.V4_4_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	a := &streamsMember{id: "member-a", process: "process-a"}
	if resp := a.heartbeat(t, cl, group); !resp.TopologyDescriptionRequired {
		t.Fatal("heartbeat v1 of a new group: TopologyDescriptionRequired false, want true")
	}
	co, err := findCoordinator(cl, group)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	desc := kmsg.NewTopologyDescription()
	st := kmsg.NewTopologyDescriptionSubtopology()
	st.SubtopologyID = "0"
	n := kmsg.NewTopologyDescriptionNode()
	n.Name, n.SourceTopics, n.Successors = "KSTREAM-SOURCE-0000000000", []string{"wc-input"}, []string{}
	st.Nodes = []kmsg.TopologyDescriptionNode{n}
	desc.Subtopologies = []kmsg.TopologyDescriptionSubtopology{st}
	update := func(member string, epoch int32) int16 {
		t.Helper()
		req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
		req.Group, req.MemberID, req.TopologyEpoch, req.TopologyDescription = group, member, epoch, desc
		kr, err := co.Request(ctx, req)
		if err != nil {
			t.Fatalf("StreamsGroupTopologyDescriptionUpdate: %v", err)
		}
		return kr.(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse).ErrorCode
	}
	if code := update("nobody", 0); code != kerr.UnknownMemberID.Code {
		t.Fatalf("update by an unknown member: error %d, want UNKNOWN_MEMBER_ID", code)
	}
	if code := update(a.id, 7); code != kerr.StreamsInvalidTopologyEpoch.Code {
		t.Fatalf("update at another topology epoch: error %d, want STREAMS_INVALID_TOPOLOGY_EPOCH", code)
	}
	if code := update(a.id, 0); code != 0 {
		t.Fatalf("update: error %d", code)
	}
	if resp := a.heartbeat(t, cl, group); resp.TopologyDescriptionRequired {
		t.Fatal("heartbeat after the update: TopologyDescriptionRequired true")
	}
	dreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	dreq.Groups, dreq.IncludeTopologyDescription = []string{group}, true
	kr, err := co.Request(ctx, dreq)
	if err != nil {
		t.Fatal(err)
	}
	g := kr.(*kmsg.StreamsGroupDescribeResponse).Groups[0]
	if g.TopologyDescriptionStatus != 2 || g.TopologyDescription == nil || len(g.TopologyDescription.Subtopologies) != 1 ||
		g.TopologyDescription.Subtopologies[0].Nodes[0].Name != n.Name {
		t.Fatalf("describe: status %d, description %+v; want STORED with the sent subtopology", g.TopologyDescriptionStatus, g.TopologyDescription)
	}
}
