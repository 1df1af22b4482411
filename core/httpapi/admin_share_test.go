package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/httpapi"
)

// A share group in the group views: listed with type "share" and its
// member, described with the member's assignment and, per partition, the
// share-partition start offset and the records in flight and acquired.
func TestAdminAPIShowsShareGroups(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.Groups.OffsetsTopicPartitions = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := b.adm.CreateTopic(ctx, 2, 1, nil, "jobs"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := 0; i < 10; i++ {
		recs = append(recs, &kgo.Record{Topic: "jobs", Partition: int32(i % 2), Value: []byte("job")})
	}
	if err := b.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "workers"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
	rr.Configs = append(rr.Configs, c)
	req.Resources = append(req.Resources, rr)
	if resp, err := req.RequestWith(ctx, b.cl); err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("share.auto.offset.reset=earliest: %v %v", err, kerr.ErrorForCode(resp.Resources[0].ErrorCode))
	}
	// The member polls until it holds all ten records and then stops
	// polling: they stay acquired (its locks last 30 s).
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.srv.KafkaAddr()), kgo.ShareGroup("workers"), kgo.ConsumeTopics("jobs"), kgo.ClientID("worker-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for got := 0; got < 10; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("polled %d of 10 records", got)
		}
		got += fs.NumRecords()
	}

	var gs []httpapi.GroupSummary
	if b.get(t, "/api/v1/groups", "", "", &gs) != 200 {
		t.Fatal("GET /api/v1/groups failed")
	}
	var found bool
	for _, g := range gs {
		if g.Group == "workers" {
			found = true
			if g.Type != "share" || g.Members != 1 || g.State != "Stable" {
				t.Fatalf("listed %+v, want a Stable share group with 1 member", g)
			}
		}
	}
	if !found {
		t.Fatalf("workers not listed: %+v", gs)
	}
	var gd httpapi.GroupDetail
	if b.get(t, "/api/v1/groups/workers", "", "", &gd) != 200 {
		t.Fatal("GET /api/v1/groups/workers failed")
	}
	if gd.Type != "share" || len(gd.MemberList) != 1 || gd.MemberList[0].ClientID != "worker-1" || len(gd.MemberList[0].Assignment["jobs"]) != 2 {
		t.Fatalf("described %+v, want worker-1 with both partitions of jobs", gd)
	}
	if len(gd.Offsets) != 2 {
		t.Fatalf("offsets %+v, want both partitions", gd.Offsets)
	}
	for _, o := range gd.Offsets {
		if o.StartOffset == nil || *o.StartOffset != 0 || o.InFlight == nil || *o.InFlight != 5 || o.Acquired == nil ||
			*o.Acquired != 5 || o.HighWatermark != 5 || o.Lag != 5 {
			t.Fatalf("jobs-%d: start %v in flight %v acquired %v hwm %d lag %d, want 0, 5, 5, 5, 5",
				o.Partition, deref(o.StartOffset), deref(o.InFlight), deref(o.Acquired), o.HighWatermark, o.Lag)
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
