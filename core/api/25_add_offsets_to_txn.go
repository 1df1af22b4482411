package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(25, 0, 4, (*Broker).handleAddOffsetsToTxn) }

// handleAddOffsetsToTxn adds the group's __consumer_offsets partition to
// the transaction, so that its TxnOffsetCommit gets the transaction's marker.
func (b *Broker) handleAddOffsetsToTxn(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	switch {
	case !b.authorize(r, sdkauth.OpWrite, sdkauth.ResourceTransactionalID, req.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
	case !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group):
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
	default:
		resp.ErrorCode = b.addOffsetsPartition(r.Version, 2, false, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group)
	}
	return protocol.Reply{Resp: resp}
}

// addOffsetsPartition adds a group's offsets partition to a transaction and
// returns the error code (0 on success). implicit is the join of KIP-890
// part 2 (TxnOffsetCommit v5+), which marks the transaction as version 2.
func (b *Broker) addOffsetsPartition(version, fencedSince int16, implicit bool, id string, pid int64, epoch int16, groupID string) int16 {
	if b.Txns == nil || b.Groups == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	t, err := b.OffsetsTopic()
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	req := txn.AddPartitionsRequest{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch,
		Partitions: []txn.TopicPartition{{Topic: group.OffsetsTopic, Partition: group.PartitionFor(groupID, int32(len(t.Partitions)))}}}
	if implicit {
		req.TransactionVersion = 2
		// TxnOffsetCommit v5+ comes to the group coordinator, which may not
		// coordinate the transaction: it adds the partition there.
		c, err := b.TxnCoordinatorOf(id)
		if err != nil {
			return b.txnCode(err, version, fencedSince)
		}
		if c != b.Config.NodeID {
			return b.txnCode(b.AddPartitionsRemote(c, req), version, fencedSince)
		}
	}
	err = b.Txns.AddPartitions(req)
	return b.txnCode(err, version, fencedSince)
}
