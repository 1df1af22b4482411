package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// OffsetCommit v2 is Apache Kafka 4's minimum (KIP-896); v10 names topics
// by id (KIP-848), an unknown id answering UNKNOWN_TOPIC_ID.
func init() { reg(8, 2, 10, (*Broker).handleOffsetCommit) }

func (b *Broker) handleOffsetCommit(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	im := b.Controller.Image()
	cr := group.CommitRequest{Group: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID,
		Generation: req.Generation, RetentionMs: -1, GroupIDNotFound: r.Version >= 9}
	if r.Version <= 4 && req.RetentionTimeMillis >= 0 {
		cr.RetentionMs = req.RetentionTimeMillis
	}
	// codes[i][j] is the answer for topic i, partition j; -1 means "asked
	// of the coordinator", whose answer fills it in.
	codes := make([][]int16, len(req.Topics))
	var asked [][2]int
	// Kafka: READ on the group, else every partition fails; then READ on
	// each topic, before its existence is checked.
	groupOK := b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group)
	read := b.topicAuth(r, sdkauth.OpRead)
	if r.Version >= 10 {
		for i := range req.Topics {
			req.Topics[i].Topic = broker.TopicNameByID(im, req.Topics[i].TopicID)
		}
	}
	for i, rt := range req.Topics {
		t, known := im.Topic(rt.Topic)
		codes[i] = make([]int16, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			if !groupOK {
				codes[i][j] = kerr.GroupAuthorizationFailed.Code
				continue
			}
			if r.Version >= 10 && rt.Topic == "" {
				codes[i][j] = kerr.UnknownTopicID.Code
				continue
			}
			if !read.allowed(rt.Topic) {
				codes[i][j] = kerr.TopicAuthorizationFailed.Code
				continue
			}
			if !known || rp.Partition < 0 || int(rp.Partition) >= len(t.Partitions) {
				codes[i][j] = kerr.UnknownTopicOrPartition.Code
				continue
			}
			codes[i][j] = -1
			cp := group.CommitPartition{TopicPartition: group.TopicPartition{Topic: rt.Topic, Partition: rp.Partition},
				Offset: rp.Offset, LeaderEpoch: -1}
			if r.Version >= 6 {
				cp.LeaderEpoch = rp.LeaderEpoch
			}
			if rp.Metadata != nil {
				cp.Metadata = *rp.Metadata
			}
			cr.Partitions = append(cr.Partitions, cp)
			asked = append(asked, [2]int{i, j})
		}
	}
	var errs []error
	var err error
	switch {
	case b.Groups == nil:
		err = group.ErrCoordinatorNotAvailable
	case len(cr.Partitions) > 0:
		errs, err = b.Groups.CommitOffsets(cr)
	}
	for k, at := range asked {
		if err != nil {
			codes[at[0]][at[1]] = errCode(err)
		} else {
			codes[at[0]][at[1]] = errCode(errs[k])
		}
	}
	for i, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for j, rp := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, codes[i][j]
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if err != nil || len(cr.Partitions) == 0 || b.Config.Log.Durability != config.DurabilityFsync {
		return protocol.Reply{Resp: resp}
	}
	p := b.Groups.Partition(req.Group)
	if p == nil {
		return protocol.Reply{Resp: resp}
	}
	// Committed offsets are acknowledged once on disk, like acks=all writes.
	return protocol.Reply{Later: func() kmsg.Response {
		if err := p.Sync(); err != nil {
			b.Logger.Error("fsync of committed offsets failed", "group", req.Group, "err", err)
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					if resp.Topics[i].Partitions[j].ErrorCode == 0 {
						resp.Topics[i].Partitions[j].ErrorCode = kerr.CoordinatorNotAvailable.Code
					}
				}
			}
		}
		return resp
	}}
}
