package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(37, 0, 3, (*Broker).handleCreatePartitions) }

func (b *Broker) handleCreatePartitions(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	add := func(topic string, e *apiError) {
		t := kmsg.NewCreatePartitionsResponseTopic()
		t.Topic = topic
		if e != nil {
			t.ErrorCode, t.ErrorMessage = e.code, e.message()
		}
		resp.Topics = append(resp.Topics, t)
	}

	// A topic listed twice is answered once, with INVALID_REQUEST, and not
	// changed.
	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	// Kafka: ALTER on each topic, checked before the topic's existence.
	alter := b.topicAuth(r, sdkauth.OpAlter)
	var reqs []controller.CreatePartitions
	for _, t := range req.Topics {
		if count[t.Topic] > 1 {
			continue
		}
		if !alter.allowed(t.Topic) {
			add(t.Topic, newAPIError(kerr.TopicAuthorizationFailed, "The topic authorization is failed."))
			continue
		}
		cp := controller.CreatePartitions{Topic: t.Topic, Count: t.Count}
		// A null assignment list lets the controller place the new
		// partitions; an empty one must match an increase of zero.
		if t.Assignment != nil {
			cp.Assignments = make([][]int32, len(t.Assignment))
			for i, a := range t.Assignment {
				cp.Assignments[i] = a.Replicas
			}
		}
		reqs = append(reqs, cp)
	}
	reported := map[string]bool{}
	for _, t := range req.Topics {
		if count[t.Topic] > 1 && !reported[t.Topic] {
			reported[t.Topic] = true
			add(t.Topic, newAPIError(kerr.InvalidRequest, "Duplicate topic name."))
		}
	}
	if len(reqs) == 0 {
		return protocol.Reply{Resp: resp}
	}

	ctx, cancel := b.adminCtx(r, req.TimeoutMillis)
	results := b.Controller.CreatePartitions(ctx, reqs, req.ValidateOnly)
	cancel()
	grown := false
	for _, res := range results {
		if res.Err == nil && !req.ValidateOnly {
			grown = true
			b.Logger.Info("added partitions", "topic", res.Name, "partitions", res.NumPartitions)
		}
		add(res.Name, fromErr(res.Err))
	}
	if grown {
		ctx, cancel := b.ctx(req.TimeoutMillis)
		if err := b.WaitImage(ctx); err != nil {
			b.Logger.Warn("opening new partitions", "err", err)
		}
		cancel()
	}
	return protocol.Reply{Resp: resp}
}
