package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(22, 0, 5, (*Broker).handleInitProducerID) }

func (b *Broker) handleInitProducerID(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	// Kafka: WRITE on the transactional id; an idempotent producer needs
	// IDEMPOTENT_WRITE on the cluster or, from Kafka 2.8 on, WRITE on any
	// topic.
	switch {
	case req.TransactionalID != nil && !b.authorize(r, sdkauth.OpWrite, sdkauth.ResourceTransactionalID, *req.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	case req.TransactionalID == nil && !b.authorizeCluster(r, sdkauth.OpIdempotentWrite) &&
		!b.authorizeByResourceType(r, sdkauth.OpWrite, sdkauth.ResourceTopic):
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	if req.TransactionalID != nil && *req.TransactionalID != "" {
		if b.Txns == nil {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			return protocol.Reply{Resp: resp}
		}
		pe, err := b.Txns.InitProducerID(txn.InitRequest{TransactionalID: *req.TransactionalID,
			TimeoutMs: req.TransactionTimeoutMillis, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch})
		if err != nil {
			resp.ErrorCode = b.txnCode(err, r.Version, 4)
			return protocol.Reply{Resp: resp}
		}
		resp.ProducerID, resp.ProducerEpoch = pe.ProducerID, pe.Epoch
		return protocol.Reply{Resp: resp}
	}
	id, err := b.AllocateProducerID()
	if err != nil {
		b.Logger.Warn("producer id allocation failed", "err", err)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return protocol.Reply{Resp: resp}
	}
	// An idempotent producer always gets a fresh id at epoch 0; its old id's
	// sequences are abandoned with it (KIP-360 for non-transactional producers).
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return protocol.Reply{Resp: resp}
}

// AllocateProducerID hands out a producer id never used before, for
// idempotent producers here and for the transaction coordinator.
func (b *Broker) AllocateProducerID() (int64, error) {
	ctx, cancel := b.ctx(0)
	defer cancel()
	return b.ProducerIDs.Next(ctx)
}
