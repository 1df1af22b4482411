package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// OffsetFetch v1 is Apache Kafka 4's minimum (KIP-896); v8+ asks for
// several groups at once; v10 names topics by id (KIP-848).
func init() { reg(9, 1, 10, (*Broker).handleOffsetFetch) }

// fetchedGroup is one group's answer, before it takes a version's shape.
type fetchedGroup struct {
	topics []string // in answer order
	parts  map[string][]group.FetchedOffset
	err    error
	// denied holds partitions refused for want of READ on their topic.
	denied map[group.TopicPartition]bool
	// unstable holds partitions with transactional offsets not yet
	// committed or aborted, reported when the request requires stability.
	unstable map[group.TopicPartition]bool
}

// code is the error of one fetched partition.
func (fg *fetchedGroup) code(tp group.TopicPartition) int16 {
	if fg.denied[tp] {
		return kerr.TopicAuthorizationFailed.Code
	}
	if fg.unstable[tp] {
		return kerr.UnstableOffsetCommit.Code
	}
	return 0
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

// authorizeOffsetFetch applies Kafka's checks to one group's OffsetFetch:
// DESCRIBE on the group (false if denied), then READ on each topic. Named
// partitions of unreadable topics are taken out of the request and returned
// to be answered with TOPIC_AUTHORIZATION_FAILED; when every partition is
// asked for, unreadable topics are dropped from the answer silently.
func (b *Broker) authorizeOffsetFetch(r *protocol.Request, fr *group.FetchRequest) (ok bool, denied []group.TopicPartition, filter func(*fetchedGroup)) {
	filter = func(*fetchedGroup) {}
	if b.Security.Authorizer == nil {
		return true, nil, filter
	}
	if !b.authorize(r, sdkauth.OpDescribe, sdkauth.ResourceGroup, fr.Group) {
		return false, nil, filter
	}
	read := b.topicAuth(r, sdkauth.OpRead)
	if fr.Partitions != nil {
		kept := fr.Partitions[:0:0]
		for _, tp := range fr.Partitions {
			if read.allowed(tp.Topic) {
				kept = append(kept, tp)
			} else {
				denied = append(denied, tp)
			}
		}
		fr.Partitions = kept
		return true, denied, filter
	}
	return true, nil, func(fg *fetchedGroup) {
		kept := fg.topics[:0:0]
		for _, t := range fg.topics {
			if read.allowed(t) {
				kept = append(kept, t)
			}
		}
		fg.topics = kept
	}
}

// addDenied adds the partitions refused by authorizeOffsetFetch to fg's
// answer, after the others, as Kafka does.
func (fg *fetchedGroup) addDenied(denied []group.TopicPartition) {
	if len(denied) == 0 || fg.err != nil {
		return
	}
	fg.denied = map[group.TopicPartition]bool{}
	for _, tp := range denied {
		if _, ok := fg.parts[tp.Topic]; !ok {
			fg.topics = append(fg.topics, tp.Topic)
		}
		fg.parts[tp.Topic] = append(fg.parts[tp.Topic], group.FetchedOffset{TopicPartition: tp,
			Offset: group.Offset{Offset: -1, LeaderEpoch: -1}})
		fg.denied[tp] = true
	}
}

// fetchAuthorized is fetchGroupOffsets behind authorizeOffsetFetch; a group
// the principal may not describe is answered with GROUP_AUTHORIZATION_FAILED
// (the code returned; fg is then empty).
func (b *Broker) fetchAuthorized(r *protocol.Request, fr group.FetchRequest) (fetchedGroup, int16) {
	ok, denied, filter := b.authorizeOffsetFetch(r, &fr)
	if !ok {
		return fetchedGroup{}, kerr.GroupAuthorizationFailed.Code
	}
	var fg fetchedGroup
	if fr.Partitions != nil && len(fr.Partitions) == 0 && len(denied) > 0 {
		fg = fetchedGroup{parts: map[string][]group.FetchedOffset{}}
	} else {
		fg = b.fetchGroupOffsets(fr)
	}
	filter(&fg)
	fg.addDenied(denied)
	return fg, errCode(fg.err)
}

func (b *Broker) handleOffsetFetch(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if r.Version >= 8 {
		im := b.Controller.Image()
		for _, rg := range req.Groups {
			fr := group.FetchRequest{Group: rg.Group, MemberEpoch: rg.MemberEpoch}
			if rg.MemberID != nil {
				fr.MemberID = *rg.MemberID
			}
			// v10 names topics by id: an id no topic has is answered
			// UNKNOWN_TOPIC_ID, after the others.
			var unknownIDs []kmsg.OffsetFetchRequestGroupTopic
			if r.Version >= 10 {
				known := rg.Topics[:0:0]
				for _, t := range rg.Topics {
					if t.Topic = broker.TopicNameByID(im, t.TopicID); t.Topic == "" {
						unknownIDs = append(unknownIDs, t)
						continue
					}
					known = append(known, t)
				}
				if rg.Topics != nil {
					rg.Topics = known
				}
			}
			if rg.Topics != nil {
				fr.Partitions = []group.TopicPartition{}
				for _, t := range rg.Topics {
					for _, p := range t.Partitions {
						fr.Partitions = append(fr.Partitions, group.TopicPartition{Topic: t.Topic, Partition: p})
					}
				}
			}
			fg, code := b.fetchAuthorized(r, fr)
			if req.RequireStable && b.Groups != nil {
				fg.unstable = b.Groups.UnstableOffsets(rg.Group)
			}
			sg := kmsg.NewOffsetFetchResponseGroup()
			sg.Group, sg.ErrorCode = rg.Group, code
			for _, t := range fg.topics {
				st := kmsg.NewOffsetFetchResponseGroupTopic()
				st.Topic = t
				if r.Version >= 10 {
					tt, ok := im.Topic(t)
					if !ok {
						continue // deleted: it has no id to be named by
					}
					st.TopicID = tt.ID
				}
				for _, f := range fg.parts[t] {
					sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					sp.Partition, sp.Offset, sp.LeaderEpoch = f.Partition, f.Offset.Offset, f.LeaderEpoch
					sp.ErrorCode = fg.code(f.TopicPartition)
					md := f.Metadata
					sp.Metadata = &md
					st.Partitions = append(st.Partitions, sp)
				}
				sg.Topics = append(sg.Topics, st)
			}
			for _, t := range unknownIDs {
				st := kmsg.NewOffsetFetchResponseGroupTopic()
				st.TopicID = t.TopicID
				for _, p := range t.Partitions {
					sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					sp.Partition, sp.Offset, sp.LeaderEpoch, sp.ErrorCode = p, -1, -1, kerr.UnknownTopicID.Code
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
	fg, code := b.fetchAuthorized(r, fr)
	if r.Version >= 7 && req.RequireStable && b.Groups != nil {
		fg.unstable = b.Groups.UnstableOffsets(req.Group)
	}
	if code != 0 {
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
			sp.ErrorCode = fg.code(f.TopicPartition)
			md := f.Metadata
			sp.Metadata = &md
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Resp: resp}
}
