package api

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// CreateTopics v2 is Apache Kafka 4's minimum.
func init() { reg(19, 2, 7, (*Broker).handleCreateTopics) }

func (b *Broker) handleCreateTopics(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)

	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	// Kafka: CREATE on the cluster, or else on each topic.
	clusterCreate := b.authorizeCluster(r, sdkauth.OpCreate)
	createAuth := b.topicAuth(r, sdkauth.OpCreate)
	denied := map[string]bool{}
	var reqs []controller.CreateTopic
	for _, t := range req.Topics {
		if count[t.Topic] > 1 {
			continue
		}
		if !clusterCreate && !createAuth.allowed(t.Topic) {
			denied[t.Topic] = true
			continue
		}
		ct := controller.CreateTopic{Name: t.Topic, NumPartitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor}
		if len(t.ReplicaAssignment) > 0 {
			ct.Assignments = map[int32][]int32{}
			for _, a := range t.ReplicaAssignment {
				ct.Assignments[a.Partition] = a.Replicas
			}
		}
		if len(t.Configs) > 0 {
			ct.Configs = map[string]string{}
			for _, c := range t.Configs {
				if c.Value != nil {
					ct.Configs[c.Name] = *c.Value
				}
			}
		}
		reqs = append(reqs, ct)
	}
	results := map[string]controller.TopicResult{}
	if len(reqs) > 0 {
		ctx, cancel := b.adminCtx(r, req.TimeoutMillis)
		for _, res := range b.Controller.CreateTopics(ctx, reqs, req.ValidateOnly) {
			results[res.Name] = res
		}
		if !req.ValidateOnly {
			// The new partitions are hosted before the client hears back.
			if err := b.WaitImage(ctx); err != nil {
				b.Logger.Warn("created topics are not hosted yet", "err", err)
			}
		}
		cancel()
	}
	im := b.Controller.Image()
	for _, t := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = t.Topic
		st.NumPartitions, st.ReplicationFactor = -1, -1
		if count[t.Topic] > 1 {
			st.ErrorCode = kerr.InvalidRequest.Code
			st.ErrorMessage = strPtr("the topic is listed more than once in the request")
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if denied[t.Topic] {
			st.ErrorCode = kerr.TopicAuthorizationFailed.Code
			st.ErrorMessage = strPtr("authorization failed")
			resp.Topics = append(resp.Topics, st)
			continue
		}
		res := results[t.Topic]
		if res.Err != nil {
			st.ErrorCode = errCode(res.Err)
			st.ErrorMessage = errMessage(res.Err)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		st.TopicID = res.ID
		st.NumPartitions, st.ReplicationFactor = res.NumPartitions, res.ReplicationFactor
		if r.Version >= 5 {
			eff := b.Config.TopicDefaults()
			for k, v := range res.Configs {
				eff[k] = v
			}
			if !req.ValidateOnly {
				eff = b.TopicConfig(im, t.Topic)
			}
			explicit := map[string]string{}
			for _, c := range t.Configs {
				if c.Value != nil {
					explicit[c.Name] = *c.Value
				}
			}
			st.Configs = createTopicConfigs(eff, explicit)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Resp: resp}
}

// createTopicConfigs lists a new topic's effective configs, as CreateTopics
// v5+ returns them.
func createTopicConfigs(eff, explicit map[string]string) []kmsg.CreateTopicsResponseTopicConfig {
	names := make([]string, 0, len(eff))
	for k := range eff {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]kmsg.CreateTopicsResponseTopicConfig, 0, len(names))
	for _, n := range names {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name = n
		v := eff[n]
		c.Value = &v
		c.Source = int8(kmsg.ConfigSourceDefaultConfig)
		if _, ok := explicit[n]; ok {
			c.Source = int8(kmsg.ConfigSourceDynamicTopicConfig)
		}
		if def, ok := config.LookupTopicConfig(n); ok && def.Sensitive {
			c.IsSensitive = true
			c.Value = nil
		}
		out = append(out, c)
	}
	return out
}

func strPtr(s string) *string { return &s }
