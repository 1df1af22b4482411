package api

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// StreamsGroupHeartbeat v0-1 (KIP-1071); v1 carries the acceptable recovery
// lag as an int64 and sets TopologyDescriptionRequired while the group has
// no topology description for its topology epoch.
func init() {
	reg(88, 0, 1, (*Broker).handleStreamsGroupHeartbeat)
}

func (b *Broker) handleStreamsGroupHeartbeat(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.StreamsGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	// Kafka needs DESCRIBE on every source topic a topology names.
	if req.Topology != nil {
		describe := b.topicAuth(r, sdkauth.OpDescribe)
		for _, st := range req.Topology.Subtopologies {
			for _, t := range st.SourceTopics {
				if !describe.allowed(t) {
					resp.ErrorCode = kerr.TopicAuthorizationFailed.Code
					return protocol.Reply{Resp: resp}
				}
			}
		}
	}
	if b.Groups == nil {
		resp.ErrorCode = b.groupCode(nil)
		return protocol.Reply{Resp: resp}
	}
	hr := streamsHeartbeatRequest(req, r.ClientID)
	if r.Conn != nil {
		hr.ClientHost = clientHost(r.Conn.Remote)
	}
	res := b.Groups.StreamsHeartbeat(hr)
	resp.ErrorCode = errCode(res.Err)
	if res.Err != nil {
		resp.ErrorMessage = errMessage(res.Err)
		return protocol.Reply{Resp: resp}
	}
	resp.MemberID, resp.MemberEpoch = res.MemberID, res.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval.Milliseconds())
	resp.AcceptableRecoveryLagLegacy = int32(min(res.AcceptableRecoveryLag, 1<<31-1))
	resp.AcceptableRecoveryLag = res.AcceptableRecoveryLag
	resp.TaskOffsetIntervalMillis = int32(res.TaskOffsetInterval.Milliseconds())
	statuses := res.Status
	if len(res.Create) > 0 {
		if denied := b.createStreamsInternalTopics(r, res.Create); len(denied) > 0 {
			statuses = append(statuses, group.StreamsStatus{Code: group.StreamsStatusMissingInternalTopics,
				Detail: fmt.Sprintf("Unauthorized to CREATE on topics %s.", strings.Join(denied, ","))})
		}
	}
	for _, s := range statuses {
		st := kmsg.NewStreamsGroupHeartbeatResponseStatus()
		st.StatusCode, st.StatusDetail = s.Code, s.Detail
		resp.Status = append(resp.Status, st)
	}
	if res.Active != nil {
		resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks = kmsgTaskIDs(res.Active), kmsgTaskIDs(res.Standby), kmsgTaskIDs(res.Warmup)
	}
	resp.EndpointInformationEpoch = res.EndpointEpoch
	resp.TopologyDescriptionRequired = res.DescriptionRequired
	if res.PartitionsByEndpoint != nil {
		resp.PartitionsByUserEndpoint = []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
		for _, ep := range res.PartitionsByEndpoint {
			e := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpoint()
			e.UserEndpoint.Host, e.UserEndpoint.Port = ep.Endpoint.Host, ep.Endpoint.Port
			for _, t := range sortedKeys(ep.Active) {
				p := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition()
				p.Topic, p.Partitions = t, ep.Active[t]
				e.ActivePartitions = append(e.ActivePartitions, p)
			}
			for _, t := range sortedKeys(ep.Standby) {
				p := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition()
				p.Topic, p.Partitions = t, ep.Standby[t]
				e.StandbyPartitions = append(e.StandbyPartitions, p)
			}
			resp.PartitionsByUserEndpoint = append(resp.PartitionsByUserEndpoint, e)
		}
	}
	return protocol.Reply{Resp: resp}
}

func streamsHeartbeatRequest(req *kmsg.StreamsGroupHeartbeatRequest, clientID string) group.StreamsHeartbeatRequest {
	hr := group.StreamsHeartbeatRequest{
		Group: req.Group, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch, EndpointEpoch: req.EndpointInformationEpoch,
		InstanceID: req.InstanceID, RackID: req.RackID, RebalanceTimeout: millis(req.RebalanceTimeoutMillis),
		ProcessID: req.ProcessID, Shutdown: req.ShutdownApplication, ClientID: clientID,
		Active: groupTaskIDs(req.ActiveTasks), Standby: groupTaskIDs(req.StandbyTasks), Warmup: groupTaskIDs(req.WarmupTasks),
	}
	if req.RebalanceTimeoutMillis < 0 {
		hr.RebalanceTimeout = -1
	}
	if req.UserEndpoint != nil {
		hr.UserEndpoint = &group.StreamsEndpoint{Host: req.UserEndpoint.Host, Port: req.UserEndpoint.Port}
	}
	if req.ClientTags != nil {
		hr.ClientTags = map[string]string{}
		for _, t := range req.ClientTags {
			hr.ClientTags[t.Key] = t.Value
		}
	}
	if req.Topology != nil {
		topo := &group.StreamsTopology{Epoch: req.Topology.Epoch}
		for _, st := range req.Topology.Subtopologies {
			s := group.StreamsSubtopology{ID: st.SubtopologyID, SourceTopics: st.SourceTopics, SourceTopicRegex: st.SourceTopicRegex,
				RepartitionSinkTopics: st.RepartitionSinkTopics,
				StateChangelogTopics:  groupTopicInfos(st.StateChangelogTopics), RepartitionSourceTopics: groupTopicInfos(st.RepartitionSourceTopics)}
			for _, g := range st.CopartitionGroups {
				s.CopartitionGroups = append(s.CopartitionGroups, group.StreamsCopartitionGroup{
					SourceTopics: g.SourceTopics, SourceTopicRegex: g.SourceTopicRegex, RepartitionSourceTopics: g.RepartitionSourceTopics})
			}
			topo.Subtopologies = append(topo.Subtopologies, s)
		}
		hr.Topology = topo
	}
	return hr
}

func groupTopicInfos(in []kmsg.TopicInfo) []group.StreamsTopicInfo {
	out := make([]group.StreamsTopicInfo, 0, len(in))
	for _, ti := range in {
		gi := group.StreamsTopicInfo{Name: ti.Topic, Partitions: ti.NumPartitions, ReplicationFactor: ti.ReplicationFactor}
		if len(ti.Configs) > 0 {
			gi.Configs = map[string]string{}
			for _, c := range ti.Configs {
				gi.Configs[c.Key] = c.Value
			}
		}
		out = append(out, gi)
	}
	return out
}

func groupTaskIDs(in []kmsg.TaskIDs) []group.StreamsTaskIDs {
	if in == nil {
		return nil
	}
	out := make([]group.StreamsTaskIDs, 0, len(in))
	for _, t := range in {
		out = append(out, group.StreamsTaskIDs{Subtopology: t.SubtopologyID, Partitions: t.Partitions})
	}
	return out
}

func kmsgTaskIDs(in []group.StreamsTaskIDs) []kmsg.TaskIDs {
	out := make([]kmsg.TaskIDs, 0, len(in))
	for _, t := range in {
		k := kmsg.NewTaskIDs()
		k.SubtopologyID, k.Partitions = t.Subtopology, t.Partitions
		out = append(out, k)
	}
	return out
}

func sortedKeys(m map[string][]int32) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// streamsTopicsCreating are the internal topics of streams groups being
// created now, so repeated heartbeats create each once.
var streamsTopicsCreating sync.Map // topic name -> struct{}

// createStreamsInternalTopics creates, in the background as Kafka does, the
// repartition and changelog topics a streams group's topology needs, with
// the partitions the coordinator derived and the configs the topology
// gives; the member sees MISSING_INTERNAL_TOPICS until they exist. It
// returns the topics the caller may not create (Kafka: CREATE on the
// cluster or on the topic).
func (b *Broker) createStreamsInternalTopics(r *protocol.Request, topics []group.StreamsTopicInfo) []string {
	clusterCreate := b.authorizeCluster(r, sdkauth.OpCreate)
	createAuth := b.topicAuth(r, sdkauth.OpCreate)
	var denied []string
	var reqs []controller.CreateTopic
	for _, ti := range topics {
		if !clusterCreate && !createAuth.allowed(ti.Name) {
			denied = append(denied, ti.Name)
			continue
		}
		if _, busy := streamsTopicsCreating.LoadOrStore(ti.Name, struct{}{}); busy {
			continue
		}
		rf := ti.ReplicationFactor
		if rf <= 0 {
			rf = -1
		}
		reqs = append(reqs, controller.CreateTopic{Name: ti.Name, NumPartitions: ti.Partitions, ReplicationFactor: rf, Configs: ti.Configs})
	}
	if len(reqs) > 0 {
		go func() {
			defer func() {
				for _, ct := range reqs {
					streamsTopicsCreating.Delete(ct.Name)
				}
			}()
			ctx, cancel := b.ctx(0)
			defer cancel()
			for _, res := range b.Controller.CreateTopics(ctx, reqs, false) {
				if res.Err != nil && !errors.Is(res.Err, controller.ErrTopicExists) {
					b.Logger.Warn("cannot create an internal topic of a streams group", "topic", res.Name, "err", res.Err)
					continue
				}
				b.Logger.Info("created an internal topic of a streams group", "topic", res.Name)
			}
			if err := b.WaitImage(ctx); err != nil {
				b.Logger.Warn("internal topics of a streams group are not hosted yet", "err", err)
			}
		}()
	}
	return denied
}
