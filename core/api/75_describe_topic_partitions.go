package api

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DescribeTopicPartitions (KIP-966) is what kafka-topics --describe uses from
// Kafka 3.7 on.
func init() { reg(75, 0, 0, (*Broker).handleDescribeTopicPartitions) }

// maxDescribePartitions is Kafka's max.request.partition.size.limit default:
// the most partitions one response describes, whatever the client asks.
const maxDescribePartitions = 2000

func (b *Broker) handleDescribeTopicPartitions(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeTopicPartitionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	im := b.Controller.Image()

	all := len(req.Topics) == 0
	cursorTopic, cursorPartition := "", int32(0)
	if req.Cursor != nil {
		cursorTopic, cursorPartition = req.Cursor.Topic, req.Cursor.Partition
	}
	// Topics at or after the cursor, sorted and without repeats.
	seen := map[string]bool{}
	var names []string
	if all {
		for name := range im.Topics {
			if name >= cursorTopic {
				names = append(names, name)
			}
		}
	} else {
		for _, t := range req.Topics {
			if t.Topic >= cursorTopic && !seen[t.Topic] {
				seen[t.Topic] = true
				names = append(names, t.Topic)
			}
		}
	}
	sort.Strings(names)

	var bad string
	switch {
	case req.Cursor != nil && cursorPartition < 0:
		bad = "Invalid cursor partition index " + itoa(int64(cursorPartition))
	case req.Cursor != nil && !all && !seen[cursorTopic]:
		bad = "DescribeTopicPartitionsRequest topic list should contain the cursor topic: " + cursorTopic
	}
	if bad != "" {
		// Kafka answers a malformed request with the error on every
		// requested topic.
		for _, t := range req.Topics {
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.ErrorCode = kerr.InvalidRequest.Code
			rt.Topic = strPtr(t.Topic)
			resp.Topics = append(resp.Topics, rt)
		}
		b.Logger.Debug("bad DescribeTopicPartitions request", "reason", bad)
		return protocol.Reply{Resp: resp}
	}

	remaining := min(req.ResponsePartitionLimit, maxDescribePartitions)
	if remaining < 1 {
		remaining = 1
	}
	// Kafka: topics the principal may not describe are left out of the full
	// list and answered with TOPIC_AUTHORIZATION_FAILED when named, whether
	// they exist or not.
	describe := b.topicAuth(r, sdkauth.OpDescribe)
	for _, name := range names {
		if !describe.allowed(name) {
			if !all {
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				rt.Topic = strPtr(name)
				rt.ErrorCode = kerr.TopicAuthorizationFailed.Code
				rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
				resp.Topics = append(resp.Topics, rt)
			}
			continue
		}
		if remaining == 0 {
			// The next page starts at the beginning of this topic.
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: 0}
			break
		}
		t, ok := im.Topic(name)
		if !ok {
			if all {
				continue
			}
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.Topic = strPtr(name)
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			if controller.ValidateTopicName(name) != nil {
				rt.ErrorCode = kerr.InvalidTopicException.Code
			}
			rt.AuthorizedOperations = topicAllOps
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		start := int32(0)
		if name == cursorTopic {
			start = cursorPartition
		}
		rt, next := describePartitions(im, t, start, remaining)
		resp.Topics = append(resp.Topics, rt)
		if next >= 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: next}
			break
		}
		remaining -= int32(len(rt.Partitions))
	}
	if b.Security.Authorizer != nil {
		for i := range resp.Topics {
			if t := &resp.Topics[i]; t.AuthorizedOperations == topicAllOps {
				t.AuthorizedOperations = b.authorizedOps(r, sdkauth.ResourceTopic, *t.Topic, topicAllOps)
			}
		}
	}
	return protocol.Reply{Resp: resp}
}

// describePartitions describes up to limit partitions of t from index start
// on, and returns the index of the first partition left out (-1 if none).
func describePartitions(im *controller.Image, t *controller.Topic, start, limit int32) (kmsg.DescribeTopicPartitionsResponseTopic, int32) {
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	rt.Topic = strPtr(t.Name)
	rt.TopicID = t.ID
	rt.IsInternal = t.Internal
	rt.AuthorizedOperations = topicAllOps
	rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
	n := int32(len(t.Partitions))
	end := n
	if int64(start)+int64(limit) < int64(n) {
		end = start + limit
	}
	for i := start; i < end; i++ {
		p := t.Partitions[i]
		rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		rp.Partition, rp.LeaderEpoch = p.Index, p.LeaderEpoch
		rp.LeaderID = -1
		if _, ok := im.Brokers[p.Leader]; ok {
			rp.LeaderID = p.Leader
		}
		rp.Replicas = append([]int32{}, p.Replicas...)
		rp.ISR = append([]int32{}, p.ISR...)
		// The eligible leader replicas and last known leader (KIP-966) as
		// the controller keeps them; empty lists when ELR is off, as Kafka.
		rp.EligibleLeaderReplicas = append([]int32{}, p.ELR...)
		rp.LastKnownELR = append([]int32{}, p.LastKnownELR...)
		rp.OfflineReplicas = []int32{}
		for _, id := range p.Replicas {
			if b, ok := im.Brokers[id]; !ok || b.LogDirOffline {
				rp.OfflineReplicas = append(rp.OfflineReplicas, id)
			}
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	if end < n {
		return rt, end
	}
	return rt, -1
}
