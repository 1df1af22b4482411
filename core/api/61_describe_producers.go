package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DescribeProducers v0: the producer state of partitions this broker leads.
func init() { reg(61, 0, 0, (*Broker).handleDescribeProducers) }

func (b *Broker) handleDescribeProducers(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	readAuth := b.topicAuth(r, sdkauth.OpRead)
	for _, rt := range req.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		for _, idx := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = idx
			p, ok := b.Partition(rt.Topic, idx)
			switch {
			case !readAuth.allowed(rt.Topic):
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case !ok:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				if leader, _ := p.Leadership(); leader != b.Config.NodeID {
					sp.ErrorCode = kerr.NotLeaderForPartition.Code
					break
				}
				for _, pi := range p.Producers() {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID, ap.ProducerEpoch = pi.ProducerID, int32(pi.ProducerEpoch)
					ap.LastSequence, ap.LastTimestamp = pi.LastSequence, pi.LastTimestamp
					ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = pi.CoordinatorEpoch, pi.CurrentTxnStartOffset
					sp.ActiveProducers = append(sp.ActiveProducers, ap)
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Resp: resp}
}
