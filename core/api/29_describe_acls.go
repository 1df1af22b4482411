package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(29, 1, 3, (*Broker).handleDescribeAcls) }

// handleDescribeAcls lists the stored ACLs a filter matches, grouped by
// resource pattern. It needs DESCRIBE on the cluster; without the ACL
// authorizer the answer is SECURITY_DISABLED, as in Kafka.
func (b *Broker) handleDescribeAcls(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	fail := func(code *kerr.Error, msg string) protocol.Reply {
		resp.ErrorCode, resp.ErrorMessage = code.Code, kmsg.StringPtr(msg)
		return protocol.Reply{Resp: resp}
	}
	if b.Security.ACLs == nil {
		return fail(kerr.SecurityDisabled, "No Authorizer is configured.")
	}
	if !b.authorizeCluster(r, sdkauth.OpDescribe) {
		return fail(kerr.ClusterAuthorizationFailed, "")
	}
	f := aclFilter(req.ResourceType, req.ResourceName, req.ResourcePatternType, req.Principal, req.Host, req.Operation, req.PermissionType)
	if err := f.Validate(); err != nil {
		return fail(kerr.InvalidRequest, err.Error())
	}
	type resKey struct {
		t    kmsg.ACLResourceType
		name string
		p    kmsg.ACLResourcePatternType
	}
	index := map[resKey]int{}
	for _, bnd := range b.Controller.Image().ACLs {
		a := ACLFromBinding(bnd)
		if !f.Matches(a) {
			continue
		}
		k := resKey{kmsg.ACLResourceType(bnd.ResourceType), bnd.ResourceName, kmsg.ACLResourcePatternType(bnd.PatternType)}
		i, ok := index[k]
		if !ok {
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName, res.ResourcePatternType = k.t, k.name, k.p
			resp.Resources = append(resp.Resources, res)
			i = len(resp.Resources) - 1
			index[k] = i
		}
		e := kmsg.NewDescribeACLsResponseResourceACL()
		e.Principal, e.Host = bnd.Principal, bnd.Host
		e.Operation, e.PermissionType = kmsg.ACLOperation(bnd.Operation), kmsg.ACLPermissionType(bnd.Permission)
		resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, e)
	}
	return protocol.Reply{Resp: resp}
}
