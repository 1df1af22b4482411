package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// FindCoordinator v0-6; v4+ batches keys.
func init() { reg(10, 0, 6, (*Broker).handleFindCoordinator) }

// Coordinator key types.
const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
)

func (b *Broker) handleFindCoordinator(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := req.CoordinatorKeys
	if r.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, key := range keys {
		c := b.findCoordinator(r, req.CoordinatorType, key)
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if r.Version < 4 && len(resp.Coordinators) == 1 {
		c := resp.Coordinators[0]
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.ErrorMessage, c.NodeID, c.Host, c.Port
		resp.Coordinators = nil
	}
	return protocol.Reply{Resp: resp}
}

func (b *Broker) findCoordinator(r *protocol.Request, keyType int8, key string) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key, c.NodeID, c.Port = key, -1, -1
	fail := func(code *kerr.Error, msg string) kmsg.FindCoordinatorResponseCoordinator {
		c.ErrorCode = code.Code
		if msg != "" {
			c.ErrorMessage = &msg
		}
		return c
	}
	// Kafka: DESCRIBE on the group or transactional id being looked up.
	var t *controller.Topic
	var err error
	partitionFor := group.PartitionFor
	switch keyType {
	case coordinatorGroup:
		if !b.authorize(r, sdkauth.OpDescribe, sdkauth.ResourceGroup, key) {
			return fail(kerr.GroupAuthorizationFailed, "")
		}
		if b.Groups == nil {
			return fail(kerr.CoordinatorNotAvailable, "")
		}
		t, err = b.OffsetsTopic()
	case coordinatorTransaction:
		if !b.authorize(r, sdkauth.OpDescribe, sdkauth.ResourceTransactionalID, key) {
			return fail(kerr.TransactionalIDAuthorizationFailed, "")
		}
		if b.Txns == nil {
			return fail(kerr.CoordinatorNotAvailable, "")
		}
		t, err = b.TransactionTopic()
		partitionFor = txn.PartitionFor
	default:
		return fail(kerr.InvalidRequest, "unknown coordinator key type")
	}
	if err != nil {
		b.Logger.Warn("cannot create the coordinator topic", "key_type", keyType, "err", err)
		return fail(kerr.CoordinatorNotAvailable, "")
	}
	idx := partitionFor(key, int32(len(t.Partitions)))
	if idx < 0 {
		return fail(kerr.CoordinatorNotAvailable, "")
	}
	im := b.Controller.Image()
	leader := t.Partitions[idx].Leader
	br, ok := im.Broker(leader)
	if leader < 0 || !ok {
		return fail(kerr.CoordinatorNotAvailable, "")
	}
	// The coordinator's address on the listener the client came in on.
	host, port, ok := endpoint(br, r)
	if !ok {
		return fail(kerr.CoordinatorNotAvailable, "")
	}
	c.NodeID, c.Host, c.Port = br.NodeID, host, port
	return c
}
