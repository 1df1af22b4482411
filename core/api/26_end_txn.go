package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// EndTxn v0-5; v5 is KIP-890 part 2: the producer's epoch is bumped by every
// commit or abort and the new one is returned.
func init() { reg(26, 0, 5, (*Broker).handleEndTxn) }

func (b *Broker) handleEndTxn(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if !b.authorize(r, sdkauth.OpWrite, sdkauth.ResourceTransactionalID, req.TransactionalID) {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	if b.Txns == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return protocol.Reply{Resp: resp}
	}
	pe, err := b.Txns.EndTxn(txn.EndRequest{TransactionalID: req.TransactionalID, ProducerID: req.ProducerID,
		ProducerEpoch: req.ProducerEpoch, Commit: req.Commit, BumpEpoch: r.Version >= 5})
	if err != nil {
		resp.ErrorCode = b.txnCode(err, r.Version, 2)
		return protocol.Reply{Resp: resp}
	}
	if r.Version >= 5 {
		resp.ProducerID, resp.ProducerEpoch = pe.ProducerID, pe.Epoch
	}
	return protocol.Reply{Resp: resp}
}
