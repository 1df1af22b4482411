package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// AlterShareGroupOffsets v0 (KIP-932): moves the start offset of an empty
// share group's share-partitions (kafka-share-groups --reset-offsets).
func init() { reg(91, 0, 0, (*Broker).handleAlterShareGroupOffsets) }

func (b *Broker) handleAlterShareGroupOffsets(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.AlterShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	fail := func(code int16, msg string) protocol.Reply {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return protocol.Reply{Resp: resp}
	}
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.GroupID) {
		return fail(kerr.GroupAuthorizationFailed.Code, "")
	}
	if code := b.shareCoordinatorCode(req.GroupID); code != 0 {
		return fail(code, "")
	}
	st := b.share()
	if d, err := st.Groups().Describe(req.GroupID); err == nil && len(d.Members) > 0 {
		return fail(kerr.NonEmptyGroup.Code, "The group has active members; offsets can only be altered in an empty share group.")
	}
	read := b.topicAuth(r, sdkauth.OpRead)
	all := b.GroupTopics()
	changed := false
	for _, rt := range req.Topics {
		t := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		t.Topic = rt.Topic
		info, known := all[rt.Topic]
		t.TopicID = info.ID
		for _, rp := range rt.Partitions {
			p := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			p.Partition = rp.Partition
			switch {
			case !read.allowed(rt.Topic):
				p.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case !known || rp.Partition < 0 || rp.Partition >= info.Partitions:
				p.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				tp := share.TopicPartition{TopicID: info.ID, Partition: rp.Partition}
				if err := st.ResetStart(req.GroupID, tp, rp.StartOffset); err != nil {
					p.ErrorCode, p.ErrorMessage = shareErrCode(err), errMessage(err)
					break
				}
				changed = true
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if changed {
		st.Groups().Ensure(req.GroupID)
	}
	return protocol.Reply{Resp: resp}
}
