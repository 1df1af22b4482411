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
)

// isrCommit sends one OffsetCommit (outside group management) straight to
// broker id and returns its error code.
func isrCommit(ctx context.Context, cl *kgo.Client, id int32, group, topic string, topicID [16]byte, offset int64) (int16, error) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID // v10 names topics by id
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		return 0, err
	}
	return resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, nil
}

// isrFetch returns the group's committed offset of topic-0 from broker id.
func isrFetch(ctx context.Context, cl *kgo.Client, id int32, group, topic string, topicID [16]byte) (int64, error) {
	req := kmsg.NewPtrOffsetFetchRequest()
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic, rt.TopicID, rt.Partitions = topic, topicID, []int32{0} // v10 names topics by id
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	resp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		return 0, err
	}
	r := resp.(*kmsg.OffsetFetchResponse)
	if len(r.Groups) != 1 || len(r.Groups[0].Topics) != 1 || len(r.Groups[0].Topics[0].Partitions) != 1 {
		return 0, fmt.Errorf("OffsetFetch v%d answer without the group's partition: %+v", r.Version, r)
	}
	g := r.Groups[0]
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
		return 0, err
	}
	p := g.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return 0, err
	}
	return p.Offset, nil
}

// TestOffsetCommitWaitsForISR: on three nodes with __consumer_offsets
// replicated to all, a commit the coordinator's followers cannot fetch
// (both SIGSTOPped) is not acknowledged — COORDINATOR_NOT_AVAILABLE once
// offsets.commit.timeout.ms passed — and OffsetFetch does not show it; once
// the followers are back, commits are acknowledged and shown again. Before
// group writes waited for the ISR, the commit was acknowledged at once after
// the leader's local append, and lost if that leader died then.
func TestOffsetCommitWaitsForISR(t *testing.T) {
	c := startChildCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := c.client()
	const group, topic = "isr-group", "isr-topic"
	createReplicated(t, ctx, kadm.NewClient(cl), topic, 1, nil)
	// OffsetCommit and OffsetFetch v10 name topics by id; it is looked up
	// while every node answers.
	var topicID [16]byte
	for topicID == ([16]byte{}) {
		md, err := kadm.NewClient(cl).Metadata(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		if topicID = md.Topics[topic].ID; topicID == ([16]byte{}) {
			time.Sleep(100 * time.Millisecond) // polling the metadata
		}
	}

	// The coordinator, loaded, with a first commit replicated.
	var coord int32
	deadline := time.Now().Add(90 * time.Second)
	for {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey = group
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && resp.ErrorCode == 0 {
			coord = resp.NodeID
			if code, err := isrCommit(ctx, cl, coord, group, topic, topicID, 7); err == nil && code == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no coordinator took a commit: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.waitMetadata("__consumer_offsets fully in sync", 60*time.Second, func(md kadm.Metadata) bool {
		return fullISR(md, "__consumer_offsets", len(md.Topics["__consumer_offsets"].Partitions))
	})

	for id := range c.nodes {
		if id != coord {
			c.pause(id)
		}
	}
	start := time.Now()
	code, err := isrCommit(ctx, cl, coord, group, topic, topicID, 42)
	if err != nil {
		t.Fatal(err)
	}
	if code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("commit with both followers stopped answered %v after %v, want COORDINATOR_NOT_AVAILABLE",
			kerr.ErrorForCode(code), time.Since(start))
	}
	if got, err := isrFetch(ctx, cl, coord, group, topic, topicID); err != nil || got != 7 {
		t.Fatalf("OffsetFetch with the commit unreplicated: %d, %v; want 7", got, err)
	}

	for id := range c.nodes {
		c.resume(id)
	}
	deadline = time.Now().Add(90 * time.Second)
	for {
		code, err := isrCommit(ctx, cl, coord, group, topic, topicID, 43)
		if err == nil && code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("commit after the followers came back: %v %v", kerr.ErrorForCode(code), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got, err := isrFetch(ctx, cl, coord, group, topic, topicID); err != nil || got != 43 {
		t.Fatalf("OffsetFetch after a replicated commit: %d, %v; want 43", got, err)
	}
}

// isrInitProducerID sends InitProducerId for txnID straight to broker id.
func isrInitProducerID(ctx context.Context, cl *kgo.Client, id int32, txnID string) (int16, error) {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = &txnID
	req.TransactionTimeoutMillis = 5000
	req.ProducerID, req.ProducerEpoch = -1, -1
	resp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		return 0, err
	}
	return resp.(*kmsg.InitProducerIDResponse).ErrorCode, nil
}

// TestTxnStateWaitsForISR: a __transaction_state transition the
// coordinator's followers cannot fetch is not acknowledged:
// InitProducerId answers COORDINATOR_NOT_AVAILABLE once the transaction
// timeout passed, and succeeds again once the followers are back.
func TestTxnStateWaitsForISR(t *testing.T) {
	c := startChildCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := c.client()
	const txnID = "isr-txn"
	var coord int32
	deadline := time.Now().Add(90 * time.Second)
	for {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorType = txnID, 1
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && resp.ErrorCode == 0 {
			coord = resp.NodeID
			if code, err := isrInitProducerID(ctx, cl, coord, txnID); err == nil && code == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no transaction coordinator answered InitProducerId: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.waitMetadata("__transaction_state fully in sync", 60*time.Second, func(md kadm.Metadata) bool {
		return fullISR(md, "__transaction_state", len(md.Topics["__transaction_state"].Partitions))
	})
	for id := range c.nodes {
		if id != coord {
			c.pause(id)
		}
	}
	start := time.Now()
	code, err := isrInitProducerID(ctx, cl, coord, txnID)
	if err != nil {
		t.Fatal(err)
	}
	if code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("InitProducerId with both followers stopped answered %v after %v, want COORDINATOR_NOT_AVAILABLE",
			kerr.ErrorForCode(code), time.Since(start))
	}
	for id := range c.nodes {
		c.resume(id)
	}
	deadline = time.Now().Add(90 * time.Second)
	for {
		code, err := isrInitProducerID(ctx, cl, coord, txnID)
		if err == nil && code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("InitProducerId after the followers came back: %v %v", kerr.ErrorForCode(code), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
