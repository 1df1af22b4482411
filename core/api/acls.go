package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/controller"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// aclFilter converts a DescribeAcls or DeleteAcls filter.
func aclFilter(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType, principal, host *string,
	op kmsg.ACLOperation, perm kmsg.ACLPermissionType) auth.Filter {
	return auth.Filter{
		ResourceType: sdkauth.ResourceType(rt), Name: name, Pattern: sdkauth.PatternType(pt),
		Principal: principal, Host: host, Operation: sdkauth.Operation(op), Permission: auth.Permission(perm),
	}
}

// bindingMatcher adapts a filter to the controller's bindings.
func bindingMatcher(f auth.Filter) func(controller.ACLBinding) bool {
	return func(a controller.ACLBinding) bool { return f.Matches(ACLFromBinding(a)) }
}
