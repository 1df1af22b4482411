package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(31, 1, 3, (*Broker).handleDeleteAcls) }

// handleDeleteAcls removes every stored binding each filter matches and
// reports them per filter. It needs ALTER on the cluster.
func (b *Broker) handleDeleteAcls(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
	setAll := func(code int16, msg *string) protocol.Reply {
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, msg
		}
		return protocol.Reply{Resp: resp}
	}
	if b.Security.ACLs == nil {
		return setAll(kerr.SecurityDisabled.Code, kmsg.StringPtr("No Authorizer is configured."))
	}
	if !b.authorizeCluster(r, sdkauth.OpAlter) {
		return setAll(kerr.ClusterAuthorizationFailed.Code, nil)
	}
	var matchers []func(controller.ACLBinding) bool
	var at []int
	for i, f := range req.Filters {
		af := aclFilter(f.ResourceType, f.ResourceName, f.ResourcePatternType, f.Principal, f.Host, f.Operation, f.PermissionType)
		if err := af.Validate(); err != nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(err.Error())
			continue
		}
		matchers = append(matchers, bindingMatcher(af))
		at = append(at, i)
	}
	ctx, cancel := b.adminCtx(r, 0)
	defer cancel()
	deleted, err := b.Controller.DeleteACLs(ctx, matchers)
	for j, i := range at {
		if err != nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = errCode(err), errMessage(err)
			continue
		}
		for _, bnd := range deleted[j] {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName = kmsg.ACLResourceType(bnd.ResourceType), bnd.ResourceName
			m.ResourcePatternType = kmsg.ACLResourcePatternType(bnd.PatternType)
			m.Principal, m.Host = bnd.Principal, bnd.Host
			m.Operation, m.PermissionType = kmsg.ACLOperation(bnd.Operation), kmsg.ACLPermissionType(bnd.Permission)
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
		}
	}
	return protocol.Reply{Resp: resp}
}
