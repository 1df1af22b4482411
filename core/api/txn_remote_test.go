package api

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/replication"
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
			err := abortableFor(txnErrorFor(firstTxnCode(resp, "tx"), 2), tc.produceV11)
			if got := produceTxnCode(err); err == nil && tc.want != 0 || err != nil && got != tc.want {
				t.Fatalf("code %d (%v), want %d", got, err, tc.want)
			}
		})
	}
	// A transaction missing from the answer is not taken as verified.
	if code := firstTxnCode(kmsg.NewPtrAddPartitionsToTxnResponse(), "tx"); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("empty answer: code %d", code)
	}
}

type countingPeer struct{ closed *int }

func (countingPeer) Request(context.Context, kmsg.Request) (kmsg.Response, error) { return nil, nil }

// Peers keeps one client per broker and channel (markers apart from
// verifications), redials a broker whose address changed, and refuses
// clients once closed.
func TestPeersCache(t *testing.T) {
	dials, closed := 0, 0
	ps := NewPeers(func(addr string) (replication.Client, func(), error) {
		dials++
		return countingPeer{&closed}, func() { closed++ }, nil
	}, 0)
	steps := []struct {
		id               int32
		addr             string
		channel          peerChannel
		dials, closedNow int
	}{
		{1, "a:1", channelVerify, 1, 0},
		{1, "a:1", channelVerify, 1, 0},
		{1, "a:1", channelMarkers, 2, 0},
		{1, "a:1", channelMarkers, 2, 0},
		{2, "b:1", channelVerify, 3, 0},
		{1, "a:2", channelVerify, 4, 1},
	}
	for i, s := range steps {
		if _, err := ps.client(s.id, s.addr, s.channel); err != nil {
			t.Fatal(err)
		}
		if dials != s.dials || closed != s.closedNow {
			t.Fatalf("step %d: %d dials, %d closed; want %d, %d", i, dials, closed, s.dials, s.closedNow)
		}
	}
	ps.Close()
	if closed != 4 {
		t.Fatalf("%d clients closed, want 4", closed)
	}
	if _, err := ps.client(1, "a:2", channelMarkers); !errors.Is(err, errPeersClosed) {
		t.Fatalf("client after Close: %v", err)
	}
}
