package api

import (
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DeleteRecords (KIP-107) raises a partition's log start offset.
func init() { reg(21, 0, 2, (*Broker).handleDeleteRecords) }

// deleteToHighWatermark is the offset that means "everything readable now".
const deleteToHighWatermark = -1

func (b *Broker) handleDeleteRecords(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	// Kafka: DELETE on the topic, checked before the partition's existence.
	del := b.topicAuth(r, sdkauth.OpDelete)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		allowed := del.allowed(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			if !allowed {
				sp.LowWatermark, sp.ErrorCode = -1, kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			sp.LowWatermark, sp.ErrorCode = b.deleteRecords(rt.Topic, rp.Partition, rp.Offset)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Resp: resp}
}

// deleteRecords deletes the records of one partition below offset and
// returns the new low watermark (-1 on error) and the Kafka error code.
func (b *Broker) deleteRecords(topic string, index int32, offset int64) (int64, int16) {
	p, code := b.leaderPartition(topic, index)
	if code != 0 {
		return -1, code
	}
	// Only the delete cleanup policy lets records go by request; a
	// compacted topic keeps each key's latest value.
	policy := b.TopicConfig(b.Controller.Image(), topic)["cleanup.policy"]
	if !hasPolicy(policy, "delete") {
		b.Logger.Debug("delete records refused", "topic", topic, "partition", index, "cleanup.policy", policy)
		return -1, kerr.PolicyViolation.Code
	}
	off := p.Offsets()
	if offset == deleteToHighWatermark {
		offset = off.HighWatermark
	}
	if offset < 0 || offset > off.HighWatermark {
		return -1, kerr.OffsetOutOfRange.Code
	}
	if err := p.Log().DeleteRecordsBefore(offset); err != nil {
		b.Logger.Warn("delete records failed", "topic", topic, "partition", index, "offset", offset, "err", err)
		switch {
		case errors.Is(err, log.ErrOffsetOutOfRange):
			return -1, kerr.OffsetOutOfRange.Code
		case errors.Is(err, log.ErrClosed):
			// The partition was deleted or moved away meanwhile.
			return -1, kerr.NotLeaderForPartition.Code
		}
		return -1, kerr.KafkaStorageError.Code
	}
	return p.Log().LogStartOffset(), 0
}

// hasPolicy reports whether a cleanup.policy list names p.
func hasPolicy(list, p string) bool {
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == p {
			return true
		}
	}
	return false
}
