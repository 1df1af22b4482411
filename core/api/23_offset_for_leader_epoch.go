package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// OffsetForLeaderEpoch v2 is Apache Kafka 4's minimum. Consumers use it to
// validate their position after a leader change (KIP-320), followers to find
// where their log diverges from the leader's.
func init() { reg(23, 2, 4, (*Broker).handleOffsetForLeaderEpoch) }

// debuggingReplicaID marks a request that any replica, not only the leader,
// may answer (Kafka's DEBUGGING_REPLICA_ID; consumers send -1).
const debuggingReplicaID = -2

func (b *Broker) handleOffsetForLeaderEpoch(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	// Before v3 the field is not sent and reads as its default, -2.
	leaderOnly := req.ReplicaID != debuggingReplicaID
	// Kafka: replicas hold CLUSTER_ACTION; consumers (KIP-320) need DESCRIBE
	// on each topic instead.
	clusterAction := b.Security.Authorizer == nil || b.authorizeCluster(r, sdkauth.OpClusterAction)
	describe := b.topicAuth(r, sdkauth.OpDescribe)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		allowed := clusterAction || describe.allowed(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			if !allowed {
				sp.ErrorCode, sp.LeaderEpoch, sp.EndOffset = kerr.TopicAuthorizationFailed.Code, -1, -1
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			sp.ErrorCode, sp.LeaderEpoch, sp.EndOffset = b.epochEndOffset(rt.Topic, rp, leaderOnly)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Resp: resp}
}

// epochEndOffset answers one partition: the client's current leader epoch is
// checked first (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH), then leadership.
func (b *Broker) epochEndOffset(topic string, rp kmsg.OffsetForLeaderEpochRequestTopicPartition, leaderOnly bool) (int16, int32, int64) {
	p, code := b.localPartition(topic, rp.Partition)
	if code != 0 {
		return code, -1, -1
	}
	if err := p.CheckEpoch(rp.CurrentLeaderEpoch); err != nil {
		return errCode(err), -1, -1
	}
	leader, current := p.Leadership()
	if leaderOnly && leader != b.Config.NodeID {
		return kerr.NotLeaderForPartition.Code, -1, -1
	}
	l := p.Log()
	latest, hasLatest := l.LatestEpoch()
	epoch, end := endOffsetForEpoch(rp.LeaderEpoch, current, l.LogEndOffset(), latest, hasLatest, l.EndOffsetForEpoch)
	return 0, epoch, end
}

// endOffsetForEpoch is Kafka's leader-epoch-cache lookup as seen by a replica
// in leader epoch current, whose log's epoch cache may not yet hold current
// (Kafka records the epoch when a replica becomes leader; Gregor's log
// records it with the first batch written in it):
//
//   - an undefined epoch (-1), or one above current, has no end: (-1, -1);
//   - current ends at the log end offset;
//   - an epoch the log knows ends where the next known epoch starts, as the
//     log answers;
//   - an epoch between the log's latest and current ends at the log end
//     offset, where current began, and is answered with the latest epoch
//     at or below it.
func endOffsetForEpoch(requested, current int32, logEnd int64, latest int32, hasLatest bool, logLookup func(int32) (int32, int64)) (int32, int64) {
	switch {
	case requested < 0 || requested > current:
		return -1, -1
	case requested == current:
		return current, logEnd
	case hasLatest && requested <= latest:
		return logLookup(requested)
	case hasLatest:
		return latest, logEnd
	}
	return requested, logEnd
}
