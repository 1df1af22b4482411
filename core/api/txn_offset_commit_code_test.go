package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A TxnOffsetCommit whose transaction cannot be verified answers as Kafka's
// group coordinator normalises it: REQUEST_TIMED_OUT from a remote
// transaction coordinator was fatal for franz-go's GroupTransactSession,
// COORDINATOR_NOT_AVAILABLE makes it abort and retry.
func TestTxnOffsetCommitCode(t *testing.T) {
	for _, tc := range []struct{ in, want *kerr.Error }{
		{kerr.RequestTimedOut, kerr.CoordinatorNotAvailable},
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable},
		{kerr.UnknownTopicOrPartition, kerr.CoordinatorNotAvailable},
		{kerr.NotLeaderForPartition, kerr.NotCoordinator},
		{kerr.KafkaStorageError, kerr.NotCoordinator},
		{kerr.ProducerFenced, kerr.ProducerFenced},
		{kerr.ConcurrentTransactions, kerr.ConcurrentTransactions},
		{kerr.InvalidTxnState, kerr.InvalidTxnState},
	} {
		if got := txnOffsetCommitCode(tc.in.Code); got != tc.want.Code {
			t.Errorf("%s: answered %v, want %s", tc.in.Message, kerr.ErrorForCode(got), tc.want.Message)
		}
	}
}
