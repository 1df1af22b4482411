package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(43, 0, 2, (*Broker).handleElectLeaders) }

// handleElectLeaders runs preferred (v0+) or unclean (v1+) elections; it
// needs ALTER on the cluster, as in Kafka.
func (b *Broker) handleElectLeaders(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ElectLeadersRequest)
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	typ := controller.ElectPreferred
	if r.Version >= 1 {
		typ = controller.ElectionType(req.ElectionType)
	}
	var parts []controller.TopicPartition
	if req.Topics != nil {
		parts = []controller.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				parts = append(parts, controller.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	fail := func(code int16, msg string) protocol.Reply {
		resp.ErrorCode = code
		for _, t := range req.Topics {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewElectLeadersResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, code, strPtr(msg)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return protocol.Reply{Resp: resp}
	}
	if !b.authorizeCluster(r, sdkauth.OpAlter) {
		return fail(kerr.ClusterAuthorizationFailed.Code, "Cluster authorization failed.")
	}
	ctx, cancel := b.adminCtx(r, req.TimeoutMillis)
	results, err := b.Controller.ElectLeaders(ctx, typ, parts)
	cancel()
	if err != nil {
		return fail(errCode(err), err.Error())
	}
	byTopic := map[string]int{}
	for _, res := range results {
		i, ok := byTopic[res.Topic]
		if !ok {
			i = len(resp.Topics)
			byTopic[res.Topic] = i
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = res.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition = res.Partition
		if res.Err != nil {
			rp.ErrorCode, rp.ErrorMessage = errCode(res.Err), errMessage(res.Err)
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return protocol.Reply{Resp: resp}
}
