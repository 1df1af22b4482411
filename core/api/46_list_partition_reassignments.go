package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(46, 0, 0, (*Broker).handleListPartitionReassignments) }

// handleListPartitionReassignments lists reassignments in progress, of all
// partitions (null topics) or of the named ones; it needs DESCRIBE on the
// cluster. Named partitions that do not exist or are not being reassigned
// are left out, as in Kafka.
func (b *Broker) handleListPartitionReassignments(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ListPartitionReassignmentsRequest)
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if !b.authorizeCluster(r, sdkauth.OpDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		resp.ErrorMessage = strPtr("Cluster authorization failed.")
		return protocol.Reply{Resp: resp}
	}
	var parts map[string][]int32
	if req.Topics != nil {
		parts = map[string][]int32{}
		for _, t := range req.Topics {
			parts[t.Topic] = append(parts[t.Topic], t.Partitions...)
		}
	}
	byTopic := map[string]int{}
	for _, st := range b.Controller.ListPartitionReassignments(parts) {
		i, ok := byTopic[st.Topic]
		if !ok {
			i = len(resp.Topics)
			byTopic[st.Topic] = i
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = st.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition, rp.Replicas, rp.AddingReplicas, rp.RemovingReplicas = st.Partition, st.Replicas, st.AddingReplicas, st.RemovingReplicas
		if rp.AddingReplicas == nil {
			rp.AddingReplicas = []int32{}
		}
		if rp.RemovingReplicas == nil {
			rp.RemovingReplicas = []int32{}
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return protocol.Reply{Resp: resp}
}
