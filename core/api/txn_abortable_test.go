package api_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/record"
)

// A transactional batch for a partition that is not in the producer's
// transaction is refused by KIP-890 part 1 with the code the producer's
// Produce version knows: INVALID_TXN_STATE before v11, TRANSACTION_ABORTABLE
// at v11; from v12 (part 2) the partition joins the transaction instead.
// The broker-to-coordinator verification (AddPartitionsToTxn v4
// verify_only) answers TRANSACTION_ABORTABLE, as Kafka 4.x's coordinator.
func TestTxnProduceNotInTransaction(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) {
		c.Transactions.StateLogPartitions = 1
		c.Transactions.StateLogReplicationFactor = 1
	})
	e.createTopic("abortable", 1, nil)
	tests := []struct {
		id      string
		produce int16 // Produce version, or -1 for AddPartitionsToTxn v4 verify_only
		want    int16
		joined  bool // the partition is in the transaction afterwards
	}{
		{"v9", 9, kerr.InvalidTxnState.Code, false},
		{"v10", 10, kerr.InvalidTxnState.Code, false},
		{"v11", 11, kerr.TransactionAbortable.Code, false},
		{"v12", 12, 0, true},
		{"verify-only", -1, kerr.TransactionAbortable.Code, false},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			pid, epoch := initTxnID(t, e, tc.id)
			if tc.produce < 0 {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				tr := kmsg.NewAddPartitionsToTxnRequestTransaction()
				tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, tr.VerifyOnly = tc.id, pid, epoch, true
				tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
				tt.Topic, tt.Partitions = "abortable", []int32{0}
				tr.Topics = append(tr.Topics, tt)
				req.Transactions = append(req.Transactions, tr)
				resp := e.request(e.clientAt(24, 4), req).(*kmsg.AddPartitionsToTxnResponse)
				if len(resp.Transactions) != 1 || len(resp.Transactions[0].Topics) != 1 {
					t.Fatalf("AddPartitionsToTxn answer %+v", resp)
				}
				if got := resp.Transactions[0].Topics[0].Partitions[0].ErrorCode; got != tc.want {
					t.Fatalf("verify_only: %v, want %v", kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
				}
			} else {
				batch, err := record.Encode(record.BatchSpec{Transactional: true, ProducerID: pid, ProducerEpoch: epoch,
					FirstTimestamp: 1}, []record.Record{{Value: []byte("x")}})
				if err != nil {
					t.Fatal(err)
				}
				req := kmsg.NewPtrProduceRequest()
				req.TransactionID, req.Acks, req.TimeoutMillis = &tc.id, -1, 5000
				rt := kmsg.NewProduceRequestTopic()
				rt.Topic = "abortable"
				rp := kmsg.NewProduceRequestTopicPartition()
				rp.Records = batch
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				resp := e.request(e.clientAt(0, tc.produce), req).(*kmsg.ProduceResponse)
				if got := resp.Topics[0].Partitions[0].ErrorCode; got != tc.want {
					t.Fatalf("produce v%d: %v, want %v", tc.produce, kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
				}
			}
			dt := kmsg.NewPtrDescribeTransactionsRequest()
			dt.TransactionalIDs = []string{tc.id}
			d := e.request(nil, dt).(*kmsg.DescribeTransactionsResponse).TransactionStates[0]
			joined := d.State == "Ongoing" && len(d.Topics) == 1 && d.Topics[0].Topic == "abortable"
			if joined != tc.joined {
				t.Fatalf("state %s topics %+v; joined %v, want %v", d.State, d.Topics, joined, tc.joined)
			}
		})
	}
}
