package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(22, 0, 5, (*Broker).handleInitProducerID) }

// producerIDBlock is how many producer ids one controller round trip reserves.
const producerIDBlock = 1000

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
	id, err := b.nextProducerID()
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

// nextProducerID hands out ids from a block reserved through the controller,
// so ids are never reused across restarts.
func (b *Broker) nextProducerID() (int64, error) {
	b.pidMu.Lock()
	defer b.pidMu.Unlock()
	if b.pidNext >= b.pidEnd {
		ctx, cancel := b.ctx(0)
		defer cancel()
		first, err := b.Controller.AllocateProducerIDs(ctx, producerIDBlock)
		if err != nil {
			return -1, err
		}
		b.pidNext, b.pidEnd = first, first+producerIDBlock
	}
	id := b.pidNext
	b.pidNext++
	return id, nil
}
