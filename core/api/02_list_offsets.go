package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(2, 1, 11, (*Broker).handleListOffsets) }

// Special timestamps of ListOffsets.
const (
	listLatest        = -1
	listEarliest      = -2
	listMaxTimestamp  = -3
	listEarliestLocal = -4
	listLatestTiered  = -5
	// listEarliestPendingUpload is the first offset not yet copied to
	// tiered storage (KIP-1023), from v11.
	listEarliestPendingUpload = -6
)

func (b *Broker) handleListOffsets(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	describe := b.topicAuth(r, sdkauth.OpDescribe)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
			if describe.allowed(rt.Topic) {
				b.listOffset(r.Version, req.IsolationLevel, rt.Topic, rp, &sp)
			} else {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Resp: resp}
}

func (b *Broker) listOffset(version int16, isolation int8, topic string, rp kmsg.ListOffsetsRequestTopicPartition, sp *kmsg.ListOffsetsResponseTopicPartition) {
	p, ok := b.Partition(topic, rp.Partition)
	if !ok {
		sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return
	}
	if leader, _ := p.Leadership(); leader != b.Config.NodeID {
		sp.ErrorCode = kerr.NotLeaderForPartition.Code
		return
	}
	if err := p.CheckEpoch(rp.CurrentLeaderEpoch); err != nil {
		sp.ErrorCode = errCode(err)
		return
	}
	off := p.Offsets()
	_, epoch := p.Leadership()
	if e, ok := p.Log().LatestEpoch(); ok {
		epoch = e
	}
	switch ts := rp.Timestamp; {
	case ts == listLatest:
		sp.Offset = off.HighWatermark
		if isolation == 1 {
			sp.Offset = off.LastStableOffset
		}
		sp.LeaderEpoch = epoch
	case ts == listEarliest || ts == listEarliestLocal:
		sp.Offset = off.LogStartOffset
		sp.LeaderEpoch = epochAt(p.Log().EndOffsetForEpoch, epoch, off.LogStartOffset)
	case ts == listLatestTiered, ts == listEarliestPendingUpload && version >= 11:
		// Nothing is tiered: Kafka answers -1 when there is no remote log.
		sp.Offset = -1
	case ts == listEarliestPendingUpload:
		sp.ErrorCode = kerr.UnsupportedVersion.Code
	case ts == listMaxTimestamp:
		o, t, e, err := p.Log().MaxTimestamp()
		if err != nil {
			sp.ErrorCode = errCode(err)
			return
		}
		if o >= 0 && o < off.HighWatermark {
			sp.Offset, sp.Timestamp, sp.LeaderEpoch = o, t, e
		}
	case ts >= 0:
		o, t, e, found, err := p.Log().OffsetForTimestamp(ts)
		if err != nil {
			sp.ErrorCode = errCode(err)
			return
		}
		if found && o < off.HighWatermark {
			sp.Offset, sp.Timestamp, sp.LeaderEpoch = o, t, e
		}
	default:
		sp.ErrorCode = kerr.InvalidRequest.Code
	}
}

// epochAt finds the leader epoch that covers offset, walking the epoch cache
// down from the latest epoch: an epoch starts where the one before it ends.
func epochAt(endFor func(int32) (int32, int64), latest int32, offset int64) int32 {
	for e := latest; e >= 0; {
		found, _ := endFor(e)
		if found < 0 {
			return -1
		}
		prevFound, prevEnd := endFor(found - 1)
		if prevFound < 0 || prevEnd <= offset {
			return found
		}
		e = prevFound
	}
	return -1
}
