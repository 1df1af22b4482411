package tests

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/record"
)

func alterQuotas(t *testing.T, adm *kadm.Client, entries ...kadm.AlterClientQuotaEntry) kadm.AlteredClientQuotas {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := adm.AlterClientQuotas(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestClientQuotas stores quotas through AlterClientQuotas, reads them back
// through DescribeClientQuotas, and checks that a producer over its byte
// rate is throttled (throttle_time_ms, and its next request waits) while
// another user is not, and that a connection creation quota refuses
// connections.
func TestClientQuotas(t *testing.T) {
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS", "User:alice", "User:carol"}
	})
	createSCRAMUsers(t, b.Addr, map[string]string{"alice": "a-pw", "bob": "b-pw", "carol": "c-pw"})
	createTopic(t, b.Addr, "quota-topic", 1, nil)
	adm := newAdmin(t, b.Addr)
	alice := kadm.ClientQuotaEntity{{Type: "user", Name: kmsg.StringPtr("alice")}}
	res := alterQuotas(t, adm,
		kadm.AlterClientQuotaEntry{Entity: alice, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1000}, {Key: "consumer_byte_rate", Value: 5000}}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{{Type: "client-id"}}, Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 200}}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: kmsg.StringPtr("x")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "bogus_rate", Value: 1}}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{{Type: "ip", Name: kmsg.StringPtr("1.2.3.4")}, {Type: "user", Name: kmsg.StringPtr("x")}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 1}}},
	)
	for i, want := range []*kerr.Error{nil, nil, kerr.InvalidRequest, kerr.InvalidRequest} {
		if got := res[i].Err; (want == nil) != (got == nil) || (want != nil && !errors.Is(got, want)) {
			t.Fatalf("entry %d: %v, want %v", i, got, want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	described, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: kmsg.StringPtr("alice")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 1 || len(described[0].Values) != 2 || described[0].Values[0].Key != "consumer_byte_rate" ||
		described[0].Values[1].Value != 1000 {
		t.Fatalf("described %+v", described)
	}
	all, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil || len(all) != 2 {
		t.Fatalf("described everything: %+v, %v", all, err)
	}
	defaults, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchType: 1}})
	if err != nil || len(defaults) != 1 || defaults[0].Entity[0].Name != nil {
		t.Fatalf("described the default client-id: %+v, %v", defaults, err)
	}

	seed := func(user, pw string) *kgo.Broker {
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms(user, pw)["SCRAM-SHA-256"]), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl.SeedBrokers()[0]
	}
	t.Run("quota APIs need the cluster's configs permissions", func(t *testing.T) {
		br := seed("bob", "b-pw")
		req := kmsg.NewPtrDescribeClientQuotasRequest()
		resp, err := br.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.(*kmsg.DescribeClientQuotasResponse).ErrorCode; code != kerr.ClusterAuthorizationFailed.Code {
			t.Fatalf("describe as bob: %v", kerr.ErrorForCode(code))
		}
	})

	td, err := adm.ListTopics(ctx, "quota-topic")
	if err != nil {
		t.Fatal(err)
	}
	topicID := td["quota-topic"].ID
	produce := func(t *testing.T, br *kgo.Broker, size int) (*kmsg.ProduceResponse, time.Duration) {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = 1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic, rt.TopicID = "quota-topic", topicID
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = recordBatch(t, size)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		start := time.Now()
		resp, err := br.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		pr := resp.(*kmsg.ProduceResponse)
		if code := pr.Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(code))
		}
		return pr, time.Since(start)
	}
	t.Run("a producer over its byte rate is throttled and muted", func(t *testing.T) {
		br := seed("alice", "a-pw")
		// 10 s of measured window at 1000 B/s allow 10000 B.
		if pr, _ := produce(t, br, 4000); pr.ThrottleMillis != 0 {
			t.Fatalf("throttled %d ms within the quota", pr.ThrottleMillis)
		}
		pr, _ := produce(t, br, 8000)
		if pr.ThrottleMillis < 1000 || pr.ThrottleMillis > 11000 {
			t.Fatalf("throttle_time_ms %d, want about 2000", pr.ThrottleMillis)
		}
		// The connection was muted: the next produce (franz-go keeps
		// produce requests on a connection of their own) waits out the
		// throttle. The client may also hold back by itself after seeing
		// throttle_time_ms, so this is a lower bound either way.
		_, waited := produce(t, br, 10)
		if waited < time.Duration(pr.ThrottleMillis)*time.Millisecond*9/10 {
			t.Fatalf("next request answered after %v, throttle was %d ms", waited, pr.ThrottleMillis)
		}
	})
	t.Run("another user is not throttled", func(t *testing.T) {
		br := seed("carol", "c-pw")
		for i := 0; i < 3; i++ {
			if pr, _ := produce(t, br, 8000); pr.ThrottleMillis != 0 {
				t.Fatalf("carol throttled %d ms without a byte quota", pr.ThrottleMillis)
			}
		}
	})
	t.Run("connection creation quota", func(t *testing.T) {
		ip := kadm.ClientQuotaEntity{{Type: "ip", Name: kmsg.StringPtr("127.0.0.1")}}
		if r := alterQuotas(t, adm, kadm.AlterClientQuotaEntry{Entity: ip, Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 2}}}); r[0].Err != nil {
			t.Fatal(r[0].Err)
		}
		refused := 0
		var conns []net.Conn
		for i := 0; i < 10; i++ {
			c, err := net.DialTimeout("tcp", secure, 5*time.Second)
			if err != nil {
				refused++
				continue
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			// A refused connection is closed by the broker at once; an
			// admitted one waits for a request.
			c.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := c.Read(make([]byte, 1)); errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
				refused++
			}
			c.Close()
		}
		if refused < 5 {
			t.Fatalf("%d of 10 rapid connections refused at a quota of 2/s", refused)
		}
		// Removing the quota lets connections in again (the admin client
		// reconnects through the same limiter).
		eventually(t, 10*time.Second, "the quota is removed", func() error {
			r, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: ip, Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Remove: true}}}})
			if err != nil {
				return err
			}
			return r[0].Err
		})
	})
}

// recordBatch is one uncompressed record of size value bytes.
func recordBatch(t *testing.T, size int) []byte {
	t.Helper()
	raw, err := record.Encode(record.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]record.Record{{Value: make([]byte, size)}})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
