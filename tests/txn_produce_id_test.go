package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/gregorbroker/gregor/core/record"
)

// A Produce whose batch has the transactional bit set but that names no
// transactional id is refused as Kafka refuses it: every partition of the
// request answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED, also one whose
// own batch is plain, and nothing is appended. Accepted, the batch would
// open a transaction no coordinator knows of, and read_committed readers
// would stall behind it.
func TestProduceTransactionalBatchNeedsTransactionalID(t *testing.T) {
	b := startBroker(t, txnConfig)
	const topic = "txn-no-id"
	createTopic(t, b.Addr, topic, 2, nil)
	// Produce v12: topics by name.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.MaxVersions(kversion.V4_0_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// An idempotent producer id: InitProducerId without a transactional id.
	ireq := kmsg.NewPtrInitProducerIDRequest()
	ireq.TransactionTimeoutMillis = -1
	iresp, err := ireq.RequestWith(ctx, cl)
	if err != nil || iresp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v, code %d", err, iresp.ErrorCode)
	}
	encode := func(spec record.BatchSpec) []byte {
		spec.FirstTimestamp = time.Now().UnixMilli()
		bt, err := record.Encode(spec, []record.Record{{Value: []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		return bt
	}
	txnBatch := encode(record.BatchSpec{Transactional: true, ProducerID: iresp.ProducerID, ProducerEpoch: iresp.ProducerEpoch})
	plain := encode(record.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})

	produce := func(batches ...[]byte) *kmsg.ProduceResponse {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		for i, bt := range batches {
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition, rp.Records = int32(i), bt
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, tc := range []struct {
		name    string
		batches [][]byte
	}{
		{"one transactional batch", [][]byte{txnBatch}},
		{"a transactional and a plain batch", [][]byte{plain, txnBatch}},
	} {
		resp := produce(tc.batches...)
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
				t.Errorf("%s: partition %d answered %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", tc.name, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
	}
	for p, end := range endOffsets(t, b.Addr, topic) {
		if end != 0 {
			t.Errorf("partition %d has %d records, want none appended", p, end)
		}
	}
	// A plain batch without a transactional id is appended as before.
	if resp := produce(plain); resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("plain produce: %v", kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode))
	}
}
