package api

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(50, 0, 0, (*Broker).handleDescribeUserScramCredentials) }

// handleDescribeUserScramCredentials lists mechanisms and iterations (never
// salts or keys) of the named users, or of every user when none is named.
func (b *Broker) handleDescribeUserScramCredentials(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !b.authorizeCluster(r, sdkauth.OpDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	im := b.Controller.Image()
	users := make([]string, 0, len(req.Users))
	count := map[string]int{}
	for _, u := range req.Users {
		if count[u.Name]++; count[u.Name] == 1 {
			users = append(users, u.Name)
		}
	}
	if len(req.Users) == 0 {
		for u := range im.Scram {
			users = append(users, u)
		}
		sort.Strings(users)
	}
	for _, u := range users {
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = u
		creds, ok := im.Scram[u]
		switch {
		case count[u] > 1:
			res.ErrorCode = kerr.DuplicateResource.Code
			res.ErrorMessage = kmsg.StringPtr("Cannot describe SCRAM credentials for the same user twice in a single request: " + u)
		case !ok:
			res.ErrorCode = kerr.ResourceNotFound.Code
			res.ErrorMessage = kmsg.StringPtr("Attempt to describe a user credential that does not exist: " + u)
		default:
			for _, mech := range []int8{1, 2} {
				if c, ok := creds[mech]; ok {
					ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
					ci.Mechanism, ci.Iterations = mech, c.Iterations
					res.CredentialInfos = append(res.CredentialInfos, ci)
				}
			}
		}
		resp.Results = append(resp.Results, res)
	}
	return protocol.Reply{Resp: resp}
}
