package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/record"
)

// TestMirrorLinkAuthorization checks who may write a link topic when an
// authorizer is set: the link's appends need ALTER on the topic (WRITE is
// not enough, and no TRANSACTIONAL_ID ACL is needed), and WRITE alone only
// meets the read-only policy.
func TestMirrorLinkAuthorization(t *testing.T) {
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
	})
	createSCRAMUsers(t, b.Addr, map[string]string{"writer": "w-pw", "linker": "l-pw"})
	createTopic(t, b.Addr, "east.orders", 1, map[string]*string{"gregor.mirror.link": strp("east")})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, b.Addr)
	for _, a := range []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:writer").AllowHosts("*").Topics("east.orders").Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:linker").AllowHosts("*").Topics("east.orders").Operations(kadm.OpAlter),
	} {
		res, err := adm.CreateACLs(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("create acl: %v", r.Err)
			}
		}
	}
	as := func(user, pw string) *kgo.Broker {
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.RequestRetries(0),
			kgo.MaxVersions(kversion.V3_5_0()), kgo.SASL(saslMechanisms(user, pw)["SCRAM-SHA-256"]))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl.SeedBrokers()[0]
	}
	batchAt := func(base int64) []byte {
		bt, err := record.Encode(record.BatchSpec{FirstTimestamp: 1_700_000_000_000, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			[]record.Record{{Value: []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		record.SetBaseOffset(bt, base)
		return bt
	}
	link := "__gregor_link:east"
	tests := []struct {
		name  string
		user  string
		txnID *string
		want  *kerr.Error
	}{
		{"write without the link", "writer", nil, kerr.PolicyViolation},
		{"link with WRITE only", "writer", &link, kerr.TopicAuthorizationFailed},
		{"ordinary produce with ALTER only", "linker", nil, kerr.TopicAuthorizationFailed},
		{"link with ALTER", "linker", &link, nil},
	}
	pw := map[string]string{"writer": "w-pw", "linker": "l-pw"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrProduceRequest()
			req.Acks, req.TimeoutMillis, req.TransactionID = -1, 10000, tt.txnID
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = "east.orders"
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Records = batchAt(7)
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp, err := as(tt.user, pw[tt.user]).Request(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
			if err := kerr.ErrorForCode(got.ErrorCode); err != tt.want && !(tt.want == nil && err == nil) {
				t.Fatalf("produce: %v, want %v", err, tt.want)
			}
			if tt.want == nil && got.BaseOffset != 7 {
				t.Fatalf("base offset %d, want 7", got.BaseOffset)
			}
		})
	}
}
