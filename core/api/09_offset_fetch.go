package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
)

// OffsetFetch v1 is Apache Kafka 4's minimum (KIP-896); v8+ asks for
// several groups at once.
func init() { reg(9, 1, 9, (*Broker).handleOffsetFetch) }

// fetchedGroup is one group's answer, before it takes a version's shape.
type fetchedGroup struct {
	topics []string // in answer order
	parts  map[string][]group.FetchedOffset
	err    error
}

func (b *Broker) fetchGroupOffsets(req group.FetchRequest) fetchedGroup {
	if b.Groups == nil {
		return fetchedGroup{err: group.ErrCoordinatorNotAvailable}
	}
	got, err := b.Groups.FetchOffsets(req)
	if err != nil {
		return fetchedGroup{err: err}
	}
	fg := fetchedGroup{parts: map[string][]group.FetchedOffset{}}
	for _, f := range got {
		if _, ok := fg.parts[f.Topic]; !ok {
			fg.topics = append(fg.topics, f.Topic)
		}
		fg.parts[f.Topic] = append(fg.parts[f.Topic], f)
	}
	return fg
}

func (b *Broker) handleOffsetFetch(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if r.Version >= 8 {
		for _, rg := range req.Groups {
			fr := group.FetchRequest{Group: rg.Group, MemberEpoch: rg.MemberEpoch}
			if rg.MemberID != nil {
				fr.MemberID = *rg.MemberID
			}
			if rg.Topics != nil {
				fr.Partitions = []group.TopicPartition{}
				for _, t := range rg.Topics {
					for _, p := range t.Partitions {
						fr.Partitions = append(fr.Partitions, group.TopicPartition{Topic: t.Topic, Partition: p})
					}
				}
			}
			fg := b.fetchGroupOffsets(fr)
			sg := kmsg.NewOffsetFetchResponseGroup()
			sg.Group, sg.ErrorCode = rg.Group, errCode(fg.err)
			for _, t := range fg.topics {
				st := kmsg.NewOffsetFetchResponseGroupTopic()
				st.Topic = t
				for _, f := range fg.parts[t] {
					sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					sp.Partition, sp.Offset, sp.LeaderEpoch = f.Partition, f.Offset.Offset, f.LeaderEpoch
					md := f.Metadata
					sp.Metadata = &md
					st.Partitions = append(st.Partitions, sp)
				}
				sg.Topics = append(sg.Topics, st)
			}
			resp.Groups = append(resp.Groups, sg)
		}
		return protocol.Reply{Resp: resp}
	}
	fr := group.FetchRequest{Group: req.Group}
	if req.Topics != nil || r.Version < 2 {
		fr.Partitions = []group.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				fr.Partitions = append(fr.Partitions, group.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	fg := b.fetchGroupOffsets(fr)
	if fg.err != nil {
		code := errCode(fg.err)
		resp.ErrorCode = code
		// v1 has no request-wide error code: each partition carries it.
		for _, t := range req.Topics {
			st := kmsg.NewOffsetFetchResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewOffsetFetchResponseTopicPartition()
				sp.Partition, sp.Offset, sp.LeaderEpoch, sp.ErrorCode = p, -1, -1, code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return protocol.Reply{Resp: resp}
	}
	for _, t := range fg.topics {
		st := kmsg.NewOffsetFetchResponseTopic()
		st.Topic = t
		for _, f := range fg.parts[t] {
			sp := kmsg.NewOffsetFetchResponseTopicPartition()
			sp.Partition, sp.Offset, sp.LeaderEpoch = f.Partition, f.Offset.Offset, f.LeaderEpoch
			md := f.Metadata
			sp.Metadata = &md
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Resp: resp}
}
