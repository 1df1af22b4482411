package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DeleteShareGroupOffsets v0 (KIP-932): forgets an empty share group's
// state on whole topics (kafka-share-groups --delete-offsets).
func init() { reg(92, 0, 0, (*Broker).handleDeleteShareGroupOffsets) }

func (b *Broker) handleDeleteShareGroupOffsets(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DeleteShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	fail := func(code int16, msg string) protocol.Reply {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return protocol.Reply{Resp: resp}
	}
	if !b.authorize(r, sdkauth.OpDelete, sdkauth.ResourceGroup, req.GroupID) {
		return fail(kerr.GroupAuthorizationFailed.Code, "")
	}
	if code := b.shareCoordinatorCode(req.GroupID); code != 0 {
		return fail(code, "")
	}
	st := b.share()
	d, err := st.Groups().Describe(req.GroupID)
	if err != nil {
		return fail(errCode(err), err.Error())
	}
	if len(d.Members) > 0 {
		return fail(kerr.NonEmptyGroup.Code, "The group has active members; offsets can only be deleted in an empty share group.")
	}
	read := b.topicAuth(r, sdkauth.OpRead)
	all := b.GroupTopics()
	for _, rt := range req.Topics {
		t := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		t.Topic = rt.Topic
		info, known := all[rt.Topic]
		t.TopicID = info.ID
		switch {
		case !read.allowed(rt.Topic):
			t.ErrorCode = kerr.TopicAuthorizationFailed.Code
		case !known:
			t.ErrorCode = kerr.UnknownTopicOrPartition.Code
		default:
			if err := st.DeleteTopicState(req.GroupID, info.ID); err != nil {
				t.ErrorCode, t.ErrorMessage = shareErrCode(err), errMessage(err)
			}
		}
		resp.Topics = append(resp.Topics, t)
	}
	return protocol.Reply{Resp: resp}
}
