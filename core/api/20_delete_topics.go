package api

import (
	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DeleteTopics v1 is Apache Kafka 4's minimum; v6 names topics by name or id.
func init() { reg(20, 1, 6, (*Broker).handleDeleteTopics) }

func (b *Broker) handleDeleteTopics(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)

	targets := req.Topics
	if r.Version < 6 {
		targets = make([]kmsg.DeleteTopicsRequestTopic, len(req.TopicNames))
		for i := range req.TopicNames {
			targets[i] = kmsg.NewDeleteTopicsRequestTopic()
			targets[i].Topic = &req.TopicNames[i]
		}
	}
	add := func(name *string, id [16]byte, e *apiError) {
		t := kmsg.NewDeleteTopicsResponseTopic()
		t.Topic, t.TopicID = name, id
		if e != nil {
			t.ErrorCode, t.ErrorMessage = e.code, e.message()
		}
		resp.Topics = append(resp.Topics, t)
	}

	// Kafka's checks before anything is deleted: every mention must name a
	// topic exactly one way, and a name or id listed twice is answered once
	// with INVALID_REQUEST.
	nameCount := map[string]int{}
	idCount := map[uuid.UUID]int{}
	for _, t := range targets {
		switch {
		case t.Topic != nil && t.TopicID == uuid.Nil:
			nameCount[*t.Topic]++
		case t.Topic == nil && t.TopicID != uuid.Nil:
			idCount[t.TopicID]++
		}
	}
	var names []string
	var ids []uuid.UUID
	reported := map[any]bool{}
	for _, t := range targets {
		switch {
		case t.Topic == nil && t.TopicID == uuid.Nil:
			add(nil, t.TopicID, newAPIError(kerr.InvalidRequest, "Neither topic name nor id were specified."))
		case t.Topic != nil && t.TopicID != uuid.Nil:
			add(t.Topic, t.TopicID, newAPIError(kerr.InvalidRequest, "You may not specify both topic name and topic id."))
		case t.Topic != nil && nameCount[*t.Topic] > 1:
			if !reported[*t.Topic] {
				reported[*t.Topic] = true
				add(t.Topic, uuid.Nil, newAPIError(kerr.InvalidRequest, "Duplicate topic name."))
			}
		case t.Topic == nil && idCount[t.TopicID] > 1:
			if !reported[uuid.UUID(t.TopicID)] {
				reported[uuid.UUID(t.TopicID)] = true
				add(nil, t.TopicID, newAPIError(kerr.InvalidRequest, "Duplicate topic id."))
			}
		case t.Topic != nil:
			names = append(names, *t.Topic)
		default:
			ids = append(ids, t.TopicID)
		}
	}

	// A name that resolves to an id the request also lists is ambiguous:
	// neither mention is acted on, and, as in Kafka, only the name is
	// answered (with INVALID_REQUEST).
	im := b.Controller.Image()
	clash := map[uuid.UUID]bool{}
	for _, n := range names {
		if t, ok := im.Topic(n); ok && idCount[t.ID] == 1 {
			clash[t.ID] = true
		}
	}
	if len(clash) > 0 {
		keptNames := names[:0:0]
		for _, n := range names {
			if t, ok := im.Topic(n); ok && clash[t.ID] {
				name := n
				add(&name, t.ID, newAPIError(kerr.InvalidRequest, "The provided topic name maps to an ID that was already supplied."))
				continue
			}
			keptNames = append(keptNames, n)
		}
		keptIDs := ids[:0:0]
		for _, id := range ids {
			if !clash[id] {
				keptIDs = append(keptIDs, id)
			}
		}
		names, ids = keptNames, keptIDs
	}

	names, ids = b.authorizeDeletes(r, im, names, ids, add)
	names, ids = refuseInternalDeletes(im, names, ids, add)
	if len(names)+len(ids) == 0 {
		return protocol.Reply{Resp: resp}
	}
	ctx, cancel := b.adminCtx(r, req.TimeoutMillis)
	results := b.Controller.DeleteTopics(ctx, names, ids)
	cancel()
	deleted := false
	for i, res := range results {
		var name *string
		switch {
		case res.Name != "":
			n := res.Name
			name = &n
		case i < len(names):
			name = &names[i]
		}
		if res.Err == nil {
			deleted = true
		}
		add(name, res.ID, fromErr(res.Err))
	}
	if deleted {
		ctx, cancel := b.ctx(req.TimeoutMillis)
		if err := b.WaitImage(ctx); err != nil {
			b.Logger.Warn("applying topic deletion", "err", err)
		}
		cancel()
	}
	return protocol.Reply{Resp: resp}
}

// authorizeDeletes keeps the topics the principal may delete and answers the
// others as Kafka does: DESCRIBE and DELETE on the topic are both needed, a
// name is refused before its existence is checked, and a topic named by id
// that the principal may not describe is answered without its name. Ids
// that resolve to no topic are left to the controller (UNKNOWN_TOPIC_ID).
func (b *Broker) authorizeDeletes(r *protocol.Request, im *controller.Image, names []string, ids []uuid.UUID,
	add func(*string, [16]byte, *apiError)) ([]string, []uuid.UUID) {
	if b.Security.Authorizer == nil {
		return names, ids
	}
	describe := b.topicAuth(r, sdkauth.OpDescribe)
	del := b.topicAuth(r, sdkauth.OpDelete)
	denied := func() *apiError { return newAPIError(kerr.TopicAuthorizationFailed, "Authorization failed.") }
	keptNames := names[:0:0]
	for _, n := range names {
		if !describe.allowed(n) || !del.allowed(n) {
			name := n
			add(&name, uuid.Nil, denied())
			continue
		}
		keptNames = append(keptNames, n)
	}
	keptIDs := ids[:0:0]
	for _, id := range ids {
		t, ok := im.TopicByID(id)
		switch {
		case !ok:
			keptIDs = append(keptIDs, id)
		case !describe.allowed(t.Name):
			add(nil, id, denied())
		case !del.allowed(t.Name):
			name := t.Name
			add(&name, id, denied())
		default:
			keptIDs = append(keptIDs, id)
		}
	}
	return keptNames, keptIDs
}

// refuseInternalDeletes answers INVALID_TOPIC_EXCEPTION for internal topics
// (__consumer_offsets, __transaction_state), by name or by id, and keeps the
// rest. Apache Kafka 4.1 deletes them when asked, which silently drops every
// group's offsets and every open transaction; Gregor refuses, with the code
// Kafka gives a client that produces to them.
func refuseInternalDeletes(im *controller.Image, names []string, ids []uuid.UUID,
	add func(*string, [16]byte, *apiError)) ([]string, []uuid.UUID) {
	refused := func(name string) *apiError {
		return newAPIError(kerr.InvalidTopicException, "Topic "+name+" is an internal topic and cannot be deleted.")
	}
	keptNames := names[:0:0]
	for _, n := range names {
		if isInternal(im, n) {
			name := n
			t, _ := im.Topic(n)
			add(&name, t.ID, refused(n))
			continue
		}
		keptNames = append(keptNames, n)
	}
	keptIDs := ids[:0:0]
	for _, id := range ids {
		if t, ok := im.TopicByID(id); ok && t.Internal {
			name := t.Name
			add(&name, id, refused(name))
			continue
		}
		keptIDs = append(keptIDs, id)
	}
	return keptNames, keptIDs
}
