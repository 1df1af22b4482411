package api

import (
	"errors"
	"sort"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(3, 0, 13, (*Broker).handleMetadata) }

// authorizedOpsOmitted is Kafka's INT32_MIN: operations were not asked for.
const authorizedOpsOmitted = -2147483648

func (b *Broker) handleMetadata(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	im := b.Controller.Image()

	// v0 asks for every topic with an empty list; v1+ with a null one.
	all := req.Topics == nil || (r.Version == 0 && len(req.Topics) == 0)
	// A topic named by id (v10+) may still carry a name: the Java client
	// sends "" rather than null. As in Kafka, a non-zero id decides.
	for i := range req.Topics {
		if req.Topics[i].TopicID != ([16]byte{}) {
			req.Topics[i].Topic = nil
		}
	}
	autoCreate := b.Config.Topics.AutoCreate && (r.Version < 4 || req.AllowAutoTopicCreation)
	// Topics the principal may not describe are hidden from the full list
	// and answered with TOPIC_AUTHORIZATION_FAILED when named, whether they
	// exist or not, as in Kafka.
	describe := b.topicAuth(r, sdkauth.OpDescribe)
	create := b.topicAuth(r, sdkauth.OpCreate)
	canCreate := func(topic string) bool {
		return describe.allowed(topic) && (b.authorizeCluster(r, sdkauth.OpCreate) || create.allowed(topic))
	}

	if !all {
		var missing []string
		for _, rt := range req.Topics {
			if rt.Topic == nil && rt.TopicID != [16]byte{} {
				continue
			}
			if rt.Topic != nil {
				if _, ok := im.Topic(*rt.Topic); !ok && autoCreate && controller.ValidateTopicName(*rt.Topic) == nil && canCreate(*rt.Topic) {
					missing = append(missing, *rt.Topic)
				}
			}
		}
		if len(missing) > 0 {
			b.autoCreate(missing)
			im = b.Controller.Image()
		}
	}

	// Only live brokers are listed, as Kafka does: a fenced one is not
	// serving.
	for _, id := range im.LiveBrokerIDs() {
		br := im.Brokers[id]
		host, port, ok := endpoint(br, r)
		if !ok {
			continue
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = br.NodeID, host, port
		if br.Rack != "" {
			rack := br.Rack
			mb.Rack = &rack
		}
		resp.Brokers = append(resp.Brokers, mb)
	}
	cid := im.ClusterID
	resp.ClusterID = &cid
	resp.ControllerID = im.LiveControllerID(b.Config.NodeID)
	resp.AuthorizedOperations = authorizedOpsOmitted

	if all {
		names := make([]string, 0, len(im.Topics))
		for name := range im.Topics {
			if describe.allowed(name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			t := im.Topics[name]
			resp.Topics = append(resp.Topics, b.metadataTopic(r, t, req.IncludeTopicAuthorizedOperations))
		}
		return protocol.Reply{Resp: resp}
	}
	for _, rt := range req.Topics {
		var t *controller.Topic
		var ok bool
		if rt.Topic != nil {
			t, ok = im.Topic(*rt.Topic)
		} else {
			t, ok = im.TopicsByID[uuid.UUID(rt.TopicID)]
		}
		if ok && describe.allowed(t.Name) {
			resp.Topics = append(resp.Topics, b.metadataTopic(r, t, req.IncludeTopicAuthorizedOperations))
			continue
		}
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.TopicID = rt.Topic, rt.TopicID
		mt.AuthorizedOperations = authorizedOpsOmitted
		switch {
		case rt.Topic != nil && !describe.allowed(*rt.Topic):
			mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
		case ok:
			// Named by id without DESCRIBE: hidden, as an unknown id.
			mt.ErrorCode = kerr.UnknownTopicID.Code
		case rt.Topic == nil:
			mt.ErrorCode = kerr.UnknownTopicID.Code
		case controller.ValidateTopicName(*rt.Topic) != nil:
			mt.ErrorCode = kerr.InvalidTopicException.Code
		default:
			mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		resp.Topics = append(resp.Topics, mt)
	}
	return protocol.Reply{Resp: resp}
}

func (b *Broker) metadataTopic(r *protocol.Request, t *controller.Topic, includeOps bool) kmsg.MetadataResponseTopic {
	im := b.Controller.Image()
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic = &name
	mt.TopicID = t.ID
	mt.IsInternal = t.Internal
	mt.AuthorizedOperations = authorizedOpsOmitted
	if includeOps {
		mt.AuthorizedOperations = b.authorizedOps(r, sdkauth.ResourceTopic, name, topicAllOps)
	}
	for _, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Leader, mp.LeaderEpoch = p.Index, p.Leader, p.LeaderEpoch
		mp.Replicas = append([]int32{}, p.Replicas...)
		mp.ISR = append([]int32{}, p.ISR...)
		mp.OfflineReplicas = []int32{}
		for _, id := range p.Replicas {
			if b, ok := im.Brokers[id]; !ok || b.Fenced || b.LogDirOffline {
				mp.OfflineReplicas = append(mp.OfflineReplicas, id)
			}
		}
		if p.Leader < 0 {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}

// topicAllOps is the bit set of topic operations a client may perform while
// no authorizer is configured: READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE,
// DESCRIBE_CONFIGS, ALTER_CONFIGS.
const topicAllOps = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11

// autoCreate creates topics with the broker defaults, as a Metadata request
// does when auto-creation is on. A topic created concurrently is fine.
func (b *Broker) autoCreate(names []string) {
	reqs := make([]controller.CreateTopic, len(names))
	for i, n := range names {
		reqs[i] = controller.CreateTopic{Name: n, NumPartitions: -1, ReplicationFactor: -1}
	}
	ctx, cancel := b.ctx(0)
	defer cancel()
	for _, res := range b.Controller.CreateTopics(ctx, reqs, false) {
		if res.Err != nil && !errors.Is(res.Err, controller.ErrTopicExists) {
			b.Logger.Warn("auto-create failed", "topic", res.Name, "err", res.Err)
			continue
		}
		if res.Err == nil {
			b.Logger.Info("auto-created topic", "topic", res.Name, "partitions", res.NumPartitions)
		}
	}
	if err := b.WaitImage(ctx); err != nil {
		b.Logger.Warn("auto-created topics are not hosted yet", "err", err)
	}
}
