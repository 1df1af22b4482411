package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// OffsetDelete v0 (KIP-496).
func init() { reg(47, 0, 0, (*Broker).handleOffsetDelete) }

func (b *Broker) handleOffsetDelete(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.OffsetDeleteRequest)
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	// Kafka: DELETE on the group, then READ on each topic.
	if !b.authorize(r, sdkauth.OpDelete, sdkauth.ResourceGroup, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	read := b.topicAuth(r, sdkauth.OpRead)
	im := b.Controller.Image()
	var tps []group.TopicPartition
	codes := make([][]int16, len(req.Topics))
	var asked [][2]int
	for i, rt := range req.Topics {
		t, known := im.Topic(rt.Topic)
		codes[i] = make([]int16, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			if !read.allowed(rt.Topic) {
				codes[i][j] = kerr.TopicAuthorizationFailed.Code
				continue
			}
			if !known || rp.Partition < 0 || int(rp.Partition) >= len(t.Partitions) {
				codes[i][j] = kerr.UnknownTopicOrPartition.Code
				continue
			}
			tps = append(tps, group.TopicPartition{Topic: rt.Topic, Partition: rp.Partition})
			asked = append(asked, [2]int{i, j})
		}
	}
	err := group.ErrCoordinatorNotAvailable
	var errs []error
	if b.Groups != nil {
		errs, err = b.Groups.DeleteOffsets(req.Group, tps)
	}
	if err != nil {
		resp.ErrorCode = errCode(err)
		return protocol.Reply{Resp: resp}
	}
	for k, at := range asked {
		codes[at[0]][at[1]] = errCode(errs[k])
	}
	for i, rt := range req.Topics {
		st := kmsg.NewOffsetDeleteResponseTopic()
		st.Topic = rt.Topic
		for j, rp := range rt.Partitions {
			sp := kmsg.NewOffsetDeleteResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, codes[i][j]
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return b.durableGroupReply(resp, func(code int16) { resp.ErrorCode = code }, req.Group)
}
