package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// WriteTxnMarkers v0-1: a transaction coordinator (or an administrator
// aborting a hanging transaction, as kafka-transactions.sh abort does) asks
// this broker to write markers to partitions it leads.
func init() { reg(27, 0, 1, (*Broker).handleWriteTxnMarkers) }

func (b *Broker) handleWriteTxnMarkers(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.WriteTxnMarkersRequest)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	allowed := b.authorizeCluster(r, sdkauth.OpClusterAction)
	for _, m := range req.Markers {
		sm := kmsg.NewWriteTxnMarkersResponseMarker()
		sm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			st := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			st.Topic = t.Topic
			for _, idx := range t.Partitions {
				sp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				sp.Partition = idx
				if !allowed {
					sp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				} else {
					sp.ErrorCode = b.writeMarker(t.Topic, idx, partition.TxnMarker{ProducerID: m.ProducerID,
						ProducerEpoch: m.ProducerEpoch, Commit: m.Committed, CoordinatorEpoch: m.CoordinatorEpoch})
				}
				st.Partitions = append(st.Partitions, sp)
			}
			sm.Topics = append(sm.Topics, st)
		}
		resp.Markers = append(resp.Markers, sm)
	}
	return protocol.Reply{Resp: resp}
}

func (b *Broker) writeMarker(topic string, idx int32, m partition.TxnMarker) int16 {
	p, ok := b.partition(topic, idx)
	if !ok {
		return kerr.UnknownTopicOrPartition.Code
	}
	if leader, _ := p.Leadership(); leader != b.Config.NodeID {
		return kerr.NotLeaderForPartition.Code
	}
	if _, err := p.WriteTxnMarker(m); err != nil {
		b.Logger.Warn("transaction marker refused", "topic", topic, "partition", idx, "producer_id", m.ProducerID, "err", err)
		return errCode(err)
	}
	if b.Groups != nil && topic == group.OffsetsTopic {
		b.Groups.CompleteTxn(idx, m.ProducerID, m.Commit)
	}
	if b.Config.Log.Durability == config.DurabilityFsync {
		if err := p.Sync(); err != nil {
			return kerr.KafkaStorageError.Code
		}
	}
	return 0
}
