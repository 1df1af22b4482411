package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(45, 0, 1, (*Broker).handleAlterPartitionReassignments) }

// handleAlterPartitionReassignments starts (replicas given) or cancels
// (null replicas) partition reassignments; it needs ALTER on the cluster.
// From v1 a change of replication factor is refused unless the request
// allows it (KIP-860).
func (b *Broker) handleAlterPartitionReassignments(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.AllowReplicationFactorChange = req.AllowReplicationFactorChange
	if !b.authorizeCluster(r, sdkauth.OpAlter) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		resp.ErrorMessage = strPtr("Cluster authorization failed.")
		return protocol.Reply{Resp: resp}
	}
	allowRF := r.Version < 1 || req.AllowReplicationFactorChange
	im := b.Controller.Image()
	type slot struct{ topic, part int }
	var reqs []controller.Reassignment
	var slots []slot
	for ti, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for pi, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
			if !allowRF && p.Replicas != nil {
				if top, ok := im.Topic(t.Topic); ok && p.Partition >= 0 && int(p.Partition) < len(top.Partitions) {
					cur := top.Partitions[p.Partition]
					if len(cur.TargetReplicas()) != len(p.Replicas) {
						rt.Partitions[pi].ErrorCode = kerr.InvalidReplicationFactor.Code
						rt.Partitions[pi].ErrorMessage = strPtr("The replication factor is changed but the request does not allow it.")
						continue
					}
				}
			}
			reqs = append(reqs, controller.Reassignment{Topic: t.Topic, Partition: p.Partition, Replicas: p.Replicas})
			slots = append(slots, slot{ti, pi})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(reqs) == 0 {
		return protocol.Reply{Resp: resp}
	}
	ctx, cancel := b.adminCtx(r, req.TimeoutMillis)
	errs := b.Controller.AlterPartitionReassignments(ctx, reqs)
	cancel()
	for i, err := range errs {
		if err != nil {
			rp := &resp.Topics[slots[i].topic].Partitions[slots[i].part]
			rp.ErrorCode, rp.ErrorMessage = adminErrCode(err), errMessage(err)
		}
	}
	return protocol.Reply{Resp: resp}
}
