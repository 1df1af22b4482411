package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTxnOffsetCommitTopicIDs commits offsets in a transaction with
// TxnOffsetCommit v6, which names topics by id (KIP-1319): a known id is
// committed with the transaction, an unknown one answers UNKNOWN_TOPIC_ID.
func TestTxnOffsetCommitTopicIDs(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "ids-in", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := newAdmin(t, b.Addr)
	md, err := adm.Metadata(ctx, "ids-in")
	if err != nil {
		t.Fatal(err)
	}
	id := md.Topics["ids-in"].ID

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.TransactionalID("ids-tx"), kgo.DefaultProduceTopic("ids-in"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version = 6
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "ids-tx", "ids-group", pid, epoch, -1
	for _, tid := range [][16]byte{id, {0xde, 0xad}} {
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.TopicID = tid
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset, rp.LeaderEpoch = 1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Version != 6 || len(resp.Topics) != 2 {
		t.Fatalf("TxnOffsetCommit v%d: %d topics", resp.Version, len(resp.Topics))
	}
	for i, want := range []int16{0, kerr.UnknownTopicID.Code} {
		rt := resp.Topics[i]
		if rt.TopicID != req.Topics[i].TopicID || len(rt.Partitions) != 1 || rt.Partitions[0].ErrorCode != want {
			t.Fatalf("topic %d: %+v, want id %x with error %d", i, rt, req.Topics[i].TopicID, want)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		offs, err := adm.FetchOffsets(ctx, "ids-group")
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := offs.Lookup("ids-in", 0); ok && o.At == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed offsets of ids-group: %+v, want ids-in/0 at 1", offs)
		}
		time.Sleep(20 * time.Millisecond) // polling the commit markers, not synchronising
	}
}
