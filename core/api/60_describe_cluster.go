package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
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
	resp.EndpointType = req.EndpointType
	if r.Version >= 1 && req.EndpointType != endpointBrokers {
		// Gregor's controllers share the brokers' listener; there is no
		// separate controller endpoint to describe, as on a Kafka broker.
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		if req.EndpointType == endpointControllers {
			resp.ErrorMessage = strPtr("The broker does not support EndpointType.CONTROLLER")
		} else {
			resp.ErrorMessage = strPtr("The broker does not support endpoint type " + itoa(int64(req.EndpointType)))
		}
		return protocol.Reply{Resp: resp}
	}
	im := b.Controller.Image()
	resp.ClusterID = im.ClusterID
	resp.ControllerID = im.ControllerID
	for _, id := range im.BrokerIDs() {
		br := im.Brokers[id]
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port = br.NodeID, br.Host, br.Port
		if br.Rack != "" {
			rb.Rack = strPtr(br.Rack)
		}
		resp.Brokers = append(resp.Brokers, rb)
	}
	resp.ClusterAuthorizedOperations = authorizedOpsOmitted
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterAllOps
	}
	return protocol.Reply{Resp: resp}
}
