package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share/coordinator"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// FindCoordinator v0-6; v4+ batches keys.
func init() { reg(10, 0, 6, (*Broker).handleFindCoordinator) }

// Coordinator key types.
const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
	coordinatorShare       = 2 // v6+ (KIP-932), asked by brokers
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
	case coordinatorShare:
		return b.findShareCoordinator(r, key, c, fail)
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
	return b.coordinatorAt(r, br, c, fail)
}

// coordinatorAt answers with br's address on the listener the client came
// in on.
func (b *Broker) coordinatorAt(r *protocol.Request, br controller.Broker, c kmsg.FindCoordinatorResponseCoordinator,
	fail func(*kerr.Error, string) kmsg.FindCoordinatorResponseCoordinator) kmsg.FindCoordinatorResponseCoordinator {
	host, port, ok := endpoint(br, r)
	if !ok {
		return fail(kerr.CoordinatorNotAvailable, "")
	}
	c.NodeID, c.Host, c.Port = br.NodeID, host, port
	return c
}

// findShareCoordinator is key type SHARE as Kafka serves it: ClusterAction
// on the cluster (only brokers ask), version 6 or later, a key
// "groupId:topicId:partition", answered with the leader of the
// __share_group_state partition the key hashes to, creating the topic on
// first use.
func (b *Broker) findShareCoordinator(r *protocol.Request, key string, c kmsg.FindCoordinatorResponseCoordinator,
	fail func(*kerr.Error, string) kmsg.FindCoordinatorResponseCoordinator) kmsg.FindCoordinatorResponseCoordinator {
	if !b.authorizeCluster(r, sdkauth.OpClusterAction) {
		return fail(kerr.ClusterAuthorizationFailed, "")
	}
	if r.Version < 6 {
		return fail(kerr.InvalidRequest, "the share coordinator key type needs FindCoordinator v6 or later")
	}
	k, err := coordinator.ParseCoordinatorKey(key)
	if err != nil {
		return fail(kerr.InvalidRequest, err.Error())
	}
	leader, err := b.share().StateLeader(k)
	if err != nil {
		return fail(kerr.CoordinatorNotAvailable, "")
	}
	br, ok := b.Controller.Image().Broker(leader)
	if !ok {
		return fail(kerr.CoordinatorNotAvailable, "")
	}
	return b.coordinatorAt(r, br, c, fail)
}
