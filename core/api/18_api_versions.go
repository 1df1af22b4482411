package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
)

func init() { reg(18, 0, 5, (*Broker).handleApiVersions) }

// handleApiVersions lists every registered API. A client asking with a
// version above ours gets a v0 answer with UNSUPPORTED_VERSION and the list,
// so it can retry with a version we know (KIP-511). From v5 a client may
// name the cluster and node it means to reach (KIP-1242): both or neither
// (INVALID_REQUEST otherwise), and a broker that is another one answers
// REBOOTSTRAP_REQUIRED, so a client whose address now reaches the wrong
// broker bootstraps again.
func (b *Broker) handleApiVersions(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	api, _ := b.registry().Lookup(18)
	if r.Version >= 5 && r.Version <= api.Max {
		if code := b.expectedBroker(req); code != nil {
			resp.ErrorCode = code.Code
			return protocol.Reply{Resp: resp}
		}
	}
	if r.Version > api.Max {
		resp.SetVersion(0)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
	} else if r.Version >= 3 && !validSoftwareField(req.ClientSoftwareName) || r.Version >= 3 && !validSoftwareField(req.ClientSoftwareVersion) {
		resp.ErrorCode = kerr.InvalidRequest.Code
	}
	for _, a := range b.registry().APIs() {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.Key, a.Min, a.Max
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	if r.Version >= 3 && resp.ErrorCode == 0 {
		b.addFeatures(resp)
		if r.Conn != nil {
			r.Conn.SetClientSoftware(req.ClientSoftwareName, req.ClientSoftwareVersion)
		}
	}
	return protocol.Reply{Resp: resp}
}

// expectedBroker checks a v5 request's cluster and node id against this
// broker's; nil when they match or are not given.
func (b *Broker) expectedBroker(req *kmsg.ApiVersionsRequest) *kerr.Error {
	switch {
	case req.ClusterID == nil && req.NodeID == -1:
		return nil
	case req.ClusterID == nil || req.NodeID == -1:
		return kerr.InvalidRequest
	case *req.ClusterID != b.Controller.Image().ClusterID || req.NodeID != b.Config.NodeID:
		return kerr.RebootstrapRequired
	}
	return nil
}

// validSoftwareField applies Kafka's rule for client software names and
// versions: non-empty, letters, digits, '.', '-' and nothing else, starting
// and ending with a letter or digit.
func validSoftwareField(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}
