package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// WriteTxnMarkers v1-2, Kafka 4.4's range (v0 went in 4.0): a transaction
// coordinator (or an administrator aborting a hanging transaction, as
// kafka-transactions.sh abort does) asks this broker to write markers to
// partitions it leads. v2 adds the marker's TransactionVersion (KIP-890);
// it is ignorable, and the marker is checked alike at every version: its
// producer epoch must not be older than the partition's.
func init() { reg(27, 1, 2, (*Broker).handleWriteTxnMarkers) }

func (b *Broker) handleWriteTxnMarkers(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.WriteTxnMarkersRequest)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	allowed := b.authorizeCluster(r, sdkauth.OpClusterAction)
	// Markers are acks=-1 writes: the answer waits for the ISR.
	return protocol.Reply{Later: func() kmsg.Response {
		ctx, cancel := b.ctx(0)
		defer cancel()
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
						sp.ErrorCode = b.writeMarker(ctx, t.Topic, idx, partition.TxnMarker{ProducerID: m.ProducerID,
							ProducerEpoch: m.ProducerEpoch, Commit: m.Committed, CoordinatorEpoch: m.CoordinatorEpoch})
					}
					st.Partitions = append(st.Partitions, sp)
				}
				sm.Topics = append(sm.Topics, st)
			}
			resp.Markers = append(resp.Markers, sm)
		}
		return resp
	}}
}

func (b *Broker) writeMarker(ctx context.Context, topic string, idx int32, m partition.TxnMarker) int16 {
	p, ok := b.Partition(topic, idx)
	if !ok {
		return kerr.UnknownTopicOrPartition.Code
	}
	if err := b.AppendTxnMarker(ctx, p, m); err != nil {
		b.Logger.Warn("transaction marker refused", "topic", topic, "partition", idx, "producer_id", m.ProducerID, "err", err)
		if errors.Is(err, partition.ErrStorage) {
			return kerr.KafkaStorageError.Code
		}
		return errCode(err)
	}
	return 0
}
