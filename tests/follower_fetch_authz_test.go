package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

// TestFollowerFetchOnlyFromBrokers: a follower fetch skips the topic's
// fetch interceptor, so only a broker may make one. A three-node cluster
// without an authorizer serves clients on its PLAINTEXT listener and
// replicates over an INTERNAL SASL_PLAINTEXT listener as the super user
// "broker"; the topic's fetch interceptor masks every value. A plain
// client on the client listener and bob, authenticated on the internal
// listener but no super user, each naming a real follower's id, are
// refused with TOPIC_AUTHORIZATION_FAILED and see no record; the broker
// principal naming a broker that is no follower of the partition (an
// unknown id, the leader's own) gets NOT_LEADER_OR_FOLLOWER; the real
// followers keep replicating (acks=all with min.insync.replicas=3), and a
// consumer reads the values masked.
func TestFollowerFetchOnlyFromBrokers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const n = 3
	internal := map[int32]string{}
	for id := int32(1); id <= n; id++ {
		internal[id] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	mask := interceptor.Func(func(_ context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
		out := make([]interceptor.Record, len(b.Records))
		for i, r := range b.Records {
			out[i] = r
			out[i].Value = []byte("masked")
		}
		return interceptor.RewriteBatch(out), nil
	})
	nodes := startClusterWith(t, n, func(c *config.Config) {
		c.Listeners.Extra = []config.ExtraListener{{Name: "INTERNAL", Address: internal[c.NodeID], Protocol: config.ProtocolSASLPlaintext}}
		c.Security.SASLMechanisms = []string{"PLAIN", "SCRAM-SHA-512"}
		c.Security.SuperUsers = []string{"User:broker"}
		c.Cluster.InterBrokerListener = "INTERNAL"
		c.Cluster.InterBrokerSASLMechanism = "SCRAM-SHA-512"
		c.Cluster.InterBrokerSASLUsername, c.Cluster.InterBrokerSASLPassword = "broker", "broker-secret"
		c.Replication.ReplicaFetchWaitMaxMs = 200
		c.Extensions = map[string]config.Extension{"mask": {Kind: config.KindInterceptor, WASM: "mask.wasm"}}
	}, func(int32) server.Options {
		return server.Options{Interceptors: map[string]interceptor.Interceptor{"mask": mask}}
	})
	plain := nodes[1].addr
	createSCRAMUsers(t, plain, map[string]string{"broker": "broker-secret", "bob": "bob-secret"})
	const topic = "masked-rf3"
	ic, three := "mask", "3"
	adm := newAdmin(t, plain)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if r, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"gregor.interceptor.fetch": &ic, "min.insync.replicas": &three}, topic); err != nil {
		t.Fatalf("create topic: %v (%s)", err, r.ErrMessage)
	}
	md := waitMetadata(t, plain, "the topic's leader", func(md kadm.Metadata) bool {
		p, ok := md.Topics[topic].Partitions[0]
		return ok && p.Leader > 0
	})
	leader := md.Topics[topic].Partitions[0].Leader
	topicID := md.Topics[topic].ID
	var follower int32
	for id := range nodes {
		if id != leader {
			follower = id
			break
		}
	}

	// acks=all with min.insync.replicas=3: both followers fetched, as the
	// broker principal on the inter-broker listener.
	prod, err := kgo.NewClient(kgo.SeedBrokers(plain), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 3 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "ssn-%d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce (acks=all, min.insync.replicas=3): %v", err)
		}
	}

	fetch := func(cl *kgo.Client, replica int32) kmsg.FetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.ReplicaState.ID, req.ReplicaState.Epoch = replica, replica, -1
		req.MaxBytes, req.MaxWaitMillis, req.SessionEpoch = 1<<20, 0, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = 1<<20, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("fetch answer shape %+v", resp)
		}
		return resp.Topics[0].Partitions[0]
	}
	client := func(seed string, opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seed)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		// The leader's address on this listener comes from metadata.
		if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		}
		return cl
	}
	plainCl := client(plain)
	bob := client(internal[1], kgo.SASL(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism()))
	broker := client(internal[1], kgo.SASL(scram.Auth{User: "broker", Pass: "broker-secret"}.AsSha512Mechanism()))

	if got := fetch(plainCl, -1); got.ErrorCode != 0 || fmt.Sprint(fetchedValues(t, got.RecordBatches)) != "[masked masked masked]" {
		t.Fatalf("consumer fetch: error %d, values %v, want the three masked", got.ErrorCode, fetchedValues(t, got.RecordBatches))
	}
	for _, tc := range []struct {
		name    string
		cl      *kgo.Client
		replica int32
		want    *kerr.Error
	}{
		{"a plain client on the client listener", plainCl, follower, kerr.TopicAuthorizationFailed},
		{"bob on the inter-broker listener", bob, follower, kerr.TopicAuthorizationFailed},
		{"the broker principal naming an unknown broker", broker, 9, kerr.NotLeaderForPartition},
		{"the broker principal naming the leader itself", broker, leader, kerr.NotLeaderForPartition},
	} {
		got := fetch(tc.cl, tc.replica)
		if got.ErrorCode != tc.want.Code || len(got.RecordBatches) != 0 {
			t.Errorf("%s as replica %d: error %v, %d record bytes (values %v); want %v and none",
				tc.name, tc.replica, kerr.ErrorForCode(got.ErrorCode), len(got.RecordBatches), fetchedValues(t, got.RecordBatches), tc.want)
		}
	}
	// Replication was not disturbed: one more record is acknowledged by all three.
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("ssn-3")}).FirstErr(); err != nil {
		t.Fatalf("produce after the refused fetches: %v", err)
	}
}
