package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestHTTPProduceToLinkTopic: produce over HTTP meets the same read-only
// policy as Kafka Produce on a mirror link's topic (POLICY_VIOLATION, which
// the REST Proxy format answers as the non-retriable error code 1).
func TestHTTPProduceToLinkTopic(t *testing.T) {
	srv := startWithPartitioner(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"gregor.mirror.link": strPtr("east")}, "east.orders"); err != nil {
		t.Fatal(err)
	}
	code, resp := postRecords(t, srv, "east.orders", "application/vnd.kafka.binary.v2+json", `{"records":[{"value":"eA=="}]}`)
	if len(resp.Offsets) != 1 {
		t.Fatalf("%d %+v", code, resp)
	}
	o := resp.Offsets[0]
	if o.ErrorCode == nil || *o.ErrorCode != 1 || o.Error == nil || !strings.Contains(*o.Error, "read-only mirror of east") {
		t.Fatalf("answer %d %v, want the non-retriable code 1 and the policy message naming the link", *o.ErrorCode, *o.Error)
	}
}
