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
)

// TestTransactionAuthorization checks the transaction APIs where Kafka
// checks them: AddPartitionsToTxn (TRANSACTIONAL_ID WRITE, topic WRITE, no
// internal topics), AddOffsetsToTxn (TRANSACTIONAL_ID WRITE, group READ),
// TxnOffsetCommit (TRANSACTIONAL_ID WRITE, group READ, topic READ per
// partition), EndTxn (TRANSACTIONAL_ID WRITE), WriteTxnMarkers
// (CLUSTER_ACTION), DescribeProducers (topic READ), DescribeTransactions and
// ListTransactions (TRANSACTIONAL_ID DESCRIBE, topics shown only when
// describable). Clients are pinned to Kafka 3.5's versions, the client forms
// of AddPartitionsToTxn (v3) and TxnOffsetCommit (v3).
func TestTransactionAuthorization(t *testing.T) {
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
	})
	createSCRAMUsers(t, b.Addr, map[string]string{"alice": "a-pw", "bob": "b-pw", "carol": "c-pw"})
	for _, topic := range []string{"t-alice", "t-other"} {
		createTopic(t, b.Addr, topic, 1, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, b.Addr)
	acls := []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("t-alice").
			Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternPrefixed),
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Groups("g-alice").
			Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral),
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").TransactionalIDs("tx-alice").
			Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral),
		kadm.NewACLs().Allow("User:bob").AllowHosts("*").TransactionalIDs("tx-alice").
			Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral),
	}
	for _, a := range acls {
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

	dial := func(addr string, opts ...kgo.Opt) *kgo.Broker {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RequestRetries(0),
			kgo.MaxVersions(kversion.V3_5_0())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl.SeedBrokers()[0]
	}
	as := func(user, pw string) *kgo.Broker {
		return dial(secure, kgo.SASL(saslMechanisms(user, pw)["SCRAM-SHA-256"]))
	}
	alice, bob, carol, super := as("alice", "a-pw"), as("bob", "b-pw"), as("carol", "c-pw"), dial(b.Addr)
	send := func(t *testing.T, br *kgo.Broker, req kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := br.Request(ctx, req)
		if err != nil {
			t.Fatalf("%T: %v", req, err)
		}
		return resp
	}
	initPID := func(br *kgo.Broker, id string) (int64, int16) {
		var resp *kmsg.InitProducerIDResponse
		// FindCoordinator creates __transaction_state on first use; it loads shortly after.
		eventually(t, 20*time.Second, "InitProducerId "+id, func() error {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.CoordinatorType, fc.CoordinatorKey, fc.CoordinatorKeys = 1, id, []string{id}
			send(t, br, fc)
			r := kmsg.NewPtrInitProducerIDRequest()
			r.TransactionalID, r.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
			r.ProducerID, r.ProducerEpoch = -1, -1
			resp = send(t, br, r).(*kmsg.InitProducerIDResponse)
			return kerr.ErrorForCode(resp.ErrorCode)
		})
		return resp.ProducerID, resp.ProducerEpoch
	}
	pid, epoch := initPID(alice, "tx-alice")
	superPID, superEpoch := initPID(super, "tx-super")

	// codes flattens a per-partition answer to "topic" -> code (one partition each).
	addPartitions := func(br *kgo.Broker, id string, pid int64, epoch int16, topics ...string) map[string]int16 {
		r := kmsg.NewPtrAddPartitionsToTxnRequest()
		r.TransactionalID, r.ProducerID, r.ProducerEpoch = id, pid, epoch
		for _, tp := range topics {
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = tp, []int32{0}
			r.Topics = append(r.Topics, rt)
		}
		out := map[string]int16{}
		for _, rt := range send(t, br, r).(*kmsg.AddPartitionsToTxnResponse).Topics {
			for _, p := range rt.Partitions {
				out[rt.Topic] = p.ErrorCode
			}
		}
		return out
	}
	addOffsets := func(br *kgo.Broker, id, group string) int16 {
		r := kmsg.NewPtrAddOffsetsToTxnRequest()
		r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Group = id, pid, epoch, group
		return send(t, br, r).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
	}
	txnCommit := func(br *kgo.Broker, id, group string, topics ...string) map[string]int16 {
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = id, group, pid, epoch, -1
		for _, tp := range topics {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = tp
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Offset, rp.LeaderEpoch = 0, -1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
		}
		out := map[string]int16{}
		for _, rt := range send(t, br, r).(*kmsg.TxnOffsetCommitResponse).Topics {
			for _, p := range rt.Partitions {
				out[rt.Topic] = p.ErrorCode
			}
		}
		return out
	}
	endTxn := func(br *kgo.Broker, id string, pid int64, epoch int16) int16 {
		r := kmsg.NewPtrEndTxnRequest()
		r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Commit = id, pid, epoch, true
		return send(t, br, r).(*kmsg.EndTxnResponse).ErrorCode
	}
	describeTxn := func(br *kgo.Broker, id string) kmsg.DescribeTransactionsResponseTransactionState {
		r := kmsg.NewPtrDescribeTransactionsRequest()
		r.TransactionalIDs = []string{id}
		return send(t, br, r).(*kmsg.DescribeTransactionsResponse).TransactionStates[0]
	}
	listTxns := func(br *kgo.Broker) []string {
		var ids []string
		for _, s := range send(t, br, kmsg.NewPtrListTransactionsRequest()).(*kmsg.ListTransactionsResponse).TransactionStates {
			ids = append(ids, s.TransactionalID)
		}
		return ids
	}
	describeProducers := func(br *kgo.Broker, topic string) int16 {
		r := kmsg.NewPtrDescribeProducersRequest()
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0}
		r.Topics = append(r.Topics, rt)
		return send(t, br, r).(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ErrorCode
	}
	want := func(t *testing.T, what string, got int16, want *kerr.Error) {
		t.Helper()
		w := int16(0)
		if want != nil {
			w = want.Code
		}
		if got != w {
			t.Fatalf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
		}
	}

	// Refusals of the transactional id come first, whatever the rest holds.
	t.Run("without TRANSACTIONAL_ID WRITE", func(t *testing.T) {
		want(t, "AddPartitionsToTxn", addPartitions(carol, "tx-alice", pid, epoch, "t-alice")["t-alice"], kerr.TransactionalIDAuthorizationFailed)
		want(t, "AddPartitionsToTxn with DESCRIBE only", addPartitions(bob, "tx-alice", pid, epoch, "t-alice")["t-alice"], kerr.TransactionalIDAuthorizationFailed)
		want(t, "AddOffsetsToTxn", addOffsets(carol, "tx-alice", "g-alice"), kerr.TransactionalIDAuthorizationFailed)
		want(t, "TxnOffsetCommit", txnCommit(carol, "tx-alice", "g-alice", "t-alice")["t-alice"], kerr.TransactionalIDAuthorizationFailed)
		want(t, "EndTxn", endTxn(carol, "tx-alice", pid, epoch), kerr.TransactionalIDAuthorizationFailed)
	})
	t.Run("AddPartitionsToTxn topic WRITE", func(t *testing.T) {
		got := addPartitions(alice, "tx-alice", pid, epoch, "t-alice", "t-other")
		want(t, "denied topic", got["t-other"], kerr.TopicAuthorizationFailed)
		want(t, "allowed topic beside a denied one", got["t-alice"], kerr.OperationNotAttempted)
		want(t, "allowed topic", addPartitions(alice, "tx-alice", pid, epoch, "t-alice")["t-alice"], nil)
	})
	t.Run("AddOffsetsToTxn group READ", func(t *testing.T) {
		want(t, "denied group", addOffsets(alice, "tx-alice", "g-other"), kerr.GroupAuthorizationFailed)
		want(t, "allowed group", addOffsets(alice, "tx-alice", "g-alice"), nil)
	})
	t.Run("AddPartitionsToTxn refuses internal topics even to a super user", func(t *testing.T) {
		got := addPartitions(super, "tx-super", superPID, superEpoch, "__consumer_offsets", "t-other")
		want(t, "internal topic", got["__consumer_offsets"], kerr.TopicAuthorizationFailed)
		want(t, "other topic", got["t-other"], kerr.OperationNotAttempted)
	})
	t.Run("TxnOffsetCommit group and topic READ", func(t *testing.T) {
		want(t, "denied group", txnCommit(alice, "tx-alice", "g-other", "t-alice")["t-alice"], kerr.GroupAuthorizationFailed)
		got := txnCommit(alice, "tx-alice", "g-alice", "t-alice", "t-other", "t-alice-missing")
		want(t, "denied topic", got["t-other"], kerr.TopicAuthorizationFailed)
		want(t, "unknown topic", got["t-alice-missing"], kerr.UnknownTopicOrPartition)
		want(t, "allowed topic beside denied ones", got["t-alice"], nil)
	})
	t.Run("DescribeProducers topic READ", func(t *testing.T) {
		want(t, "denied topic", describeProducers(alice, "t-other"), kerr.TopicAuthorizationFailed)
		want(t, "allowed topic", describeProducers(alice, "t-alice"), nil)
	})
	t.Run("WriteTxnMarkers needs CLUSTER_ACTION", func(t *testing.T) {
		r := kmsg.NewPtrWriteTxnMarkersRequest()
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed = pid, epoch, false
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = "t-alice", []int32{0}
		m.Topics = append(m.Topics, mt)
		r.Markers = append(r.Markers, m)
		resp := send(t, alice, r).(*kmsg.WriteTxnMarkersResponse)
		want(t, "WriteTxnMarkers", resp.Markers[0].Topics[0].Partitions[0].ErrorCode, kerr.ClusterAuthorizationFailed)
	})
	t.Run("DescribeTransactions TRANSACTIONAL_ID DESCRIBE, describable topics only", func(t *testing.T) {
		want(t, "no ACL", describeTxn(carol, "tx-alice").ErrorCode, kerr.TransactionalIDAuthorizationFailed)
		a := describeTxn(alice, "tx-alice")
		want(t, "WRITE implies DESCRIBE", a.ErrorCode, nil)
		if a.State != "Ongoing" || len(a.Topics) != 1 || a.Topics[0].Topic != "t-alice" {
			t.Fatalf("alice sees state %s topics %+v, want Ongoing with t-alice alone (the offsets topic is not describable)", a.State, a.Topics)
		}
		bs := describeTxn(bob, "tx-alice")
		want(t, "DESCRIBE", bs.ErrorCode, nil)
		if bs.State != "Ongoing" || len(bs.Topics) != 0 {
			t.Fatalf("bob sees state %s topics %+v, want Ongoing with no topics", bs.State, bs.Topics)
		}
	})
	t.Run("ListTransactions lists describable ids only", func(t *testing.T) {
		if got := listTxns(carol); len(got) != 0 {
			t.Fatalf("carol sees %v", got)
		}
		if got := listTxns(alice); len(got) != 1 || got[0] != "tx-alice" {
			t.Fatalf("alice sees %v, want [tx-alice]", got)
		}
		if got := listTxns(super); len(got) != 2 {
			t.Fatalf("the super user sees %v, want both transactions", got)
		}
	})
	t.Run("EndTxn with WRITE commits", func(t *testing.T) {
		want(t, "EndTxn", endTxn(alice, "tx-alice", pid, epoch), nil)
	})
}
