package api

import (
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ListConfigResources (KIP-714, renamed from ListClientMetricsResources;
// v1 is KIP-1142) lists config resources: v0 the client-metrics
// subscriptions, v1 the resources of the requested types (all when none
// is given): topics, brokers and broker loggers (the broker ids), groups
// and client-metrics subscriptions that have configs. It needs
// DESCRIBE_CONFIGS on the cluster.
func init() { reg(74, 0, 1, (*Broker).handleListConfigResources) }

// listableConfigTypes are the types v1 lists, in Kafka's order.
var listableConfigTypes = []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeBroker,
	kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceTypeClientMetrics, kmsg.ConfigResourceTypeGroupConfig}

func (b *Broker) handleListConfigResources(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ListConfigResourcesRequest)
	resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	if !b.authorizeCluster(r, sdkauth.OpDescribeConfigs) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	types := []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeClientMetrics}
	if r.Version >= 1 {
		types = listableConfigTypes
		if len(req.ResourceTypes) > 0 {
			types = nil
			for _, t := range req.ResourceTypes {
				if !slices.Contains(listableConfigTypes, kmsg.ConfigResourceType(t)) {
					resp.ErrorCode = kerr.InvalidRequest.Code
					return protocol.Reply{Resp: resp}
				}
				types = append(types, kmsg.ConfigResourceType(t))
			}
		}
	}
	resp.ConfigResources = []kmsg.ListConfigResourcesResponseConfigResource{}
	im := b.Controller.Image()
	for _, typ := range types {
		for _, name := range configResourceNames(im, typ) {
			cr := kmsg.NewListConfigResourcesResponseConfigResource()
			cr.Name, cr.Type = name, int8(typ)
			resp.ConfigResources = append(resp.ConfigResources, cr)
		}
	}
	return protocol.Reply{Resp: resp}
}

// configResourceNames lists the resources of typ in im, sorted.
func configResourceNames(im *controller.Image, typ kmsg.ConfigResourceType) []string {
	var names []string
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		for name := range im.Topics {
			names = append(names, name)
		}
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		for _, id := range im.BrokerIDs() {
			names = append(names, itoa(int64(id)))
		}
	default:
		for res := range im.Configs {
			if res.Type == controller.ResourceType(typ) {
				names = append(names, res.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}
