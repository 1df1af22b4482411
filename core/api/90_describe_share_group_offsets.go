package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DescribeShareGroupOffsets v0-1 (KIP-932); v1 adds the lag (KIP-1226).
func init() { reg(90, 0, 1, (*Broker).handleDescribeShareGroupOffsets) }

func (b *Broker) handleDescribeShareGroupOffsets(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	describe := b.topicAuth(r, sdkauth.OpDescribe)
	for _, rg := range req.Groups {
		g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		g.GroupID = rg.GroupID
		if !b.authorize(r, sdkauth.OpDescribe, sdkauth.ResourceGroup, rg.GroupID) {
			g.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		if code := b.shareCoordinatorCode(rg.GroupID); code != 0 {
			g.ErrorCode = code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		topics := rg.Topics
		if topics == nil {
			// Null: every share-partition the group has state for.
			byName := map[string]int{}
			for _, k := range b.share().Partitions().Group(rg.GroupID) {
				name, ok := b.share().TopicName(k.TopicID)
				if !ok {
					continue
				}
				i, ok := byName[name]
				if !ok {
					topics = append(topics, kmsg.DescribeShareGroupOffsetsRequestGroupTopic{Topic: name})
					i = len(topics) - 1
					byName[name] = i
				}
				topics[i].Partitions = append(topics[i].Partitions, k.Partition)
			}
		}
		all := b.GroupTopics()
		for _, rt := range topics {
			if !describe.allowed(rt.Topic) {
				continue // Kafka leaves out topics the caller may not describe
			}
			t := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			t.Topic = rt.Topic
			info, known := all[rt.Topic]
			t.TopicID = info.ID
			for _, part := range rt.Partitions {
				rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = part, -1, -1, -1
				if !known || part < 0 || part >= info.Partitions {
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
					t.Partitions = append(t.Partitions, rp)
					continue
				}
				tp := share.TopicPartition{TopicID: info.ID, Partition: part}
				if off, ok := b.share().DescribeOffsets(rg.GroupID, rt.Topic, tp); ok {
					rp.StartOffset, rp.LeaderEpoch, rp.Lag = off.StartOffset, off.LeaderEpoch, off.Lag
				}
				t.Partitions = append(t.Partitions, rp)
			}
			g.Topics = append(g.Topics, t)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return protocol.Reply{Resp: resp}
}
