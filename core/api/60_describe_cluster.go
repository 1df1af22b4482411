package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(60, 0, 2, (*Broker).handleDescribeCluster) }

// DescribeCluster endpoint types (KIP-919).
const (
	endpointBrokers     = 1
	endpointControllers = 2
)

func (b *Broker) handleDescribeCluster(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	// The answer names the kind of endpoint that answered: a broker's.
	resp.EndpointType = endpointBrokers
	switch {
	case r.Version < 1 || req.EndpointType == endpointBrokers:
	case req.EndpointType == endpointControllers:
		// Gregor's controllers are reached through the brokers' listener;
		// like a Kafka broker, it tells a client asking for controllers
		// that it is not one.
		resp.ErrorCode = kerr.MismatchedEndpointType.Code
		resp.ErrorMessage = strPtr("The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER")
		return protocol.Reply{Resp: resp}
	default:
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		resp.ErrorMessage = strPtr("Unsupported endpoint type " + itoa(int64(req.EndpointType)))
		return protocol.Reply{Resp: resp}
	}
	im := b.Controller.Image()
	resp.ClusterID = im.ClusterID
	resp.ControllerID = im.LiveControllerID(b.Config.NodeID)
	for _, id := range im.BrokerIDs() {
		br := im.Brokers[id]
		host, port, ok := endpoint(br, r)
		// Fenced brokers are listed only when asked for (v2+, KIP-1073).
		if !ok || br.Fenced && !(r.Version >= 2 && req.IncludeFencedBrokers) {
			continue
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.IsFenced = br.NodeID, host, port, br.Fenced
		if br.Rack != "" {
			rb.Rack = strPtr(br.Rack)
		}
		resp.Brokers = append(resp.Brokers, rb)
	}
	resp.ClusterAuthorizedOperations = authorizedOpsOmitted
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = b.authorizedOps(r, sdkauth.ResourceCluster, sdkauth.ClusterName, clusterAllOps)
	}
	return protocol.Reply{Resp: resp}
}
