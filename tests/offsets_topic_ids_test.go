package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOffsetCommitFetchTopicIDs: OffsetCommit and OffsetFetch v10 name
// topics by id (KIP-848); a known id commits and reads back, an unknown one
// answers UNKNOWN_TOPIC_ID, and fetching every offset names topics by id.
func TestOffsetCommitFetchTopicIDs(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "ids-offsets", 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	md, err := newAdmin(t, b.Addr).Metadata(ctx, "ids-offsets")
	if err != nil {
		t.Fatal(err)
	}
	id, unknown := md.Topics["ids-offsets"].ID, [16]byte{7}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "ids-g", -1
	for _, tid := range [][16]byte{id, unknown} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.TopicID = tid
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 1, 42
		rt.Partitions = append(rt.Partitions, rp)
		commit.Topics = append(commit.Topics, rt)
	}
	cresp, err := commit.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if cresp.Version != 10 || len(cresp.Topics) != 2 {
		t.Fatalf("OffsetCommit v%d, %d topics; want v10 with 2", cresp.Version, len(cresp.Topics))
	}
	for i, want := range []int16{0, kerr.UnknownTopicID.Code} {
		if rt := cresp.Topics[i]; rt.TopicID != commit.Topics[i].TopicID || rt.Partitions[0].ErrorCode != want {
			t.Fatalf("commit topic %d: %+v, want error %d", i, rt, want)
		}
	}

	fetch := func(topics []kmsg.OffsetFetchRequestGroupTopic) kmsg.OffsetFetchResponseGroup {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group, g.Topics = "ids-g", topics
		req.Groups = append(req.Groups, g)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != 10 || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			t.Fatalf("OffsetFetch v%d: %+v", resp.Version, resp.Groups)
		}
		return resp.Groups[0]
	}
	var topics []kmsg.OffsetFetchRequestGroupTopic
	for _, tid := range [][16]byte{id, unknown} {
		rt := kmsg.NewOffsetFetchRequestGroupTopic()
		rt.TopicID, rt.Partitions = tid, []int32{1}
		topics = append(topics, rt)
	}
	g := fetch(topics)
	if len(g.Topics) != 2 {
		t.Fatalf("fetch by id: %+v", g.Topics)
	}
	if got := g.Topics[0]; got.TopicID != id || got.Partitions[0].Offset != 42 || got.Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch by id: %+v, want offset 42 under the topic's id", got)
	}
	if got := g.Topics[1]; got.TopicID != unknown || got.Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("fetch of an unknown id: %+v, want UNKNOWN_TOPIC_ID", got)
	}
	all := fetch(nil)
	if len(all.Topics) != 1 || all.Topics[0].TopicID != id || all.Topics[0].Partitions[0].Offset != 42 {
		t.Fatalf("fetch of every offset: %+v", all.Topics)
	}
}
