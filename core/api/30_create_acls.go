package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(30, 1, 3, (*Broker).handleCreateAcls) }

// handleCreateAcls stores ACL bindings in the metadata log; each creation
// gets its own result. It needs ALTER on the cluster.
func (b *Broker) handleCreateAcls(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(req.Creations))
	setAll := func(code *kerr.Error, msg string) protocol.Reply {
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code.Code, kmsg.StringPtr(msg)
		}
		return protocol.Reply{Resp: resp}
	}
	if b.Security.ACLs == nil {
		return setAll(kerr.SecurityDisabled, "No Authorizer is configured.")
	}
	if !b.authorizeCluster(r, sdkauth.OpAlter) {
		return setAll(kerr.ClusterAuthorizationFailed, "")
	}
	var bindings []controller.ACLBinding
	var at []int
	for i, c := range req.Creations {
		a := auth.ACL{
			Resource:  sdkauth.Resource{Type: sdkauth.ResourceType(c.ResourceType), Name: c.ResourceName, Pattern: sdkauth.PatternType(c.ResourcePatternType)},
			Principal: c.Principal, Host: c.Host, Operation: sdkauth.Operation(c.Operation), Permission: auth.Permission(c.PermissionType),
		}
		if err := a.Validate(); err != nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(err.Error())
			continue
		}
		bindings = append(bindings, BindingFromACL(a))
		at = append(at, i)
	}
	ctx, cancel := b.adminCtx(r, 0)
	defer cancel()
	for j, err := range b.Controller.CreateACLs(ctx, bindings) {
		if err != nil {
			resp.Results[at[j]].ErrorCode, resp.Results[at[j]].ErrorMessage = errCode(err), errMessage(err)
		}
	}
	return protocol.Reply{Resp: resp}
}
