package api

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/txn"
)

// A remote coordinator's AddPartitionsToTxn answer reaches the producer
// with the code a local verification would give.
func TestRemoteVerificationCodes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		top, part  int16
		produceV11 bool
		want       int16
	}{
		{"in transaction", 0, 0, true, 0},
		{"not coordinator is retriable", kerr.NotCoordinator.Code, 0, true, kerr.NotEnoughReplicas.Code},
		{"loading is retriable", kerr.CoordinatorLoadInProgress.Code, 0, true, kerr.NotEnoughReplicas.Code},
		{"fenced", kerr.ProducerFenced.Code, 0, true, kerr.InvalidProducerEpoch.Code},
		{"old fenced", kerr.InvalidProducerEpoch.Code, 0, true, kerr.InvalidProducerEpoch.Code},
		{"concurrent", 0, kerr.ConcurrentTransactions.Code, true, kerr.ConcurrentTransactions.Code},
		{"missing partition, v11", 0, kerr.TransactionAbortable.Code, true, kerr.TransactionAbortable.Code},
		{"missing partition, v10", 0, kerr.TransactionAbortable.Code, false, kerr.InvalidTxnState.Code},
		{"invalid producer id mapping", kerr.InvalidProducerIDMapping.Code, 0, true, kerr.InvalidProducerIDMapping.Code},
		{"passed through", kerr.ClusterAuthorizationFailed.Code, 0, true, kerr.ClusterAuthorizationFailed.Code},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := kmsg.NewPtrAddPartitionsToTxnResponse()
			resp.ErrorCode = tc.top
			rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
			rt.TransactionalID = "tx"
			tt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			tt.Topic = "t"
			p := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
			p.ErrorCode = tc.part
			tt.Partitions = append(tt.Partitions, p)
			rt.Topics = append(rt.Topics, tt)
			resp.Transactions = append(resp.Transactions, rt)
			err := txn.AbortableFor(broker.AddPartitionsAnswer(resp, "tx", 2), tc.produceV11)
			if got := produceTxnCode(err); err == nil && tc.want != 0 || err != nil && got != tc.want {
				t.Fatalf("code %d (%v), want %d", got, err, tc.want)
			}
		})
	}
	// A transaction missing from the answer is not taken as verified.
	if err := broker.AddPartitionsAnswer(kmsg.NewPtrAddPartitionsToTxnResponse(), "tx", 2); produceTxnCode(err) != kerr.NotEnoughReplicas.Code || !errors.Is(err, txn.ErrCoordinatorNotAvailable) {
		t.Fatalf("empty answer: %v", err)
	}
}
