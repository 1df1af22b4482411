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

// TestMetadataByTopicIDWithEmptyName: the Java AdminClient's
// describeTopics(TopicCollection.ofTopicIds(...)) sends Metadata with the
// topic id and an empty (not null) name; the id decides, as in Kafka.
func TestMetadataByTopicIDWithEmptyName(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "by-id", 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := newAdmin(t, b.Addr).Metadata(ctx, "by-id")
	if err != nil {
		t.Fatal(err)
	}
	id := md.Topics["by-id"].ID
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, c := range []struct {
		name string
		id   [16]byte
		want int16
	}{{"", id, 0}, {"", [16]byte{1}, kerr.UnknownTopicID.Code}} {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic, rt.TopicID = kmsg.StringPtr(c.name), c.id
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Topics) != 1 {
			t.Fatalf("%d topics in the answer", len(resp.Topics))
		}
		got := resp.Topics[0]
		if got.ErrorCode != c.want || got.TopicID != c.id {
			t.Fatalf("id %x: error %d id %x, want error %d", c.id, got.ErrorCode, got.TopicID, c.want)
		}
		if c.want == 0 && (got.Topic == nil || *got.Topic != "by-id" || len(got.Partitions) != 2) {
			t.Fatalf("id %x: topic %v with %d partitions, want by-id with 2", c.id, got.Topic, len(got.Partitions))
		}
	}
}

// TestListOffsetsEarliestPendingUpload: timestamp -6 (KIP-1023, v11) is
// answered -1 when nothing is tiered, as Kafka does; before v11 it is not
// a known timestamp.
func TestListOffsetsEarliestPendingUpload(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "pending", 1, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "pending", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		version    int16
		wantCode   int16
		wantOffset int64
	}{{11, 0, -1}, {8, kerr.UnsupportedVersion.Code, -1}} {
		// franz-go sends the highest version both sides know; an older
		// client is pinned to Kafka 3.7's versions (ListOffsets v8).
		vcl := cl
		if c.version < 11 {
			vcl, err = kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.MaxVersions(kversion.V3_7_0()))
			if err != nil {
				t.Fatal(err)
			}
			defer vcl.Close()
		}
		req := kmsg.NewPtrListOffsetsRequest()
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "pending"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = -6
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, vcl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != c.version {
			t.Fatalf("sent v%d, want v%d", resp.Version, c.version)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != c.wantCode || p.Offset != c.wantOffset {
			t.Fatalf("v%d: error %d offset %d, want error %d offset %d", c.version, p.ErrorCode, p.Offset, c.wantCode, c.wantOffset)
		}
	}
}

// TestDeleteGroupsV3ErrorMessage: DeleteGroups v3 (Kafka 4.4) carries a
// message with each group's error.
func TestDeleteGroupsV3ErrorMessage(t *testing.T) {
	b := startBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = []string{"no-such-group"}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	g := resp.Groups[0]
	if resp.Version != 3 || g.ErrorCode != kerr.GroupIDNotFound.Code || g.ErrorMessage == nil || *g.ErrorMessage == "" {
		t.Fatalf("DeleteGroups v%d: %+v, want GROUP_ID_NOT_FOUND with a message", resp.Version, g)
	}
}
