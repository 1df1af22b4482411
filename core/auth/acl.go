package auth

import (
	"fmt"
	"strings"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// Permission is an ACL's permission type, with Kafka's codes.
type Permission int8

// Kafka's permission types.
const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1
	PermissionDeny    Permission = 2
	PermissionAllow   Permission = 3
)

// String returns Kafka's name ("ALLOW").
func (p Permission) String() string {
	switch p {
	case PermissionAny:
		return "ANY"
	case PermissionDeny:
		return "DENY"
	case PermissionAllow:
		return "ALLOW"
	}
	return "UNKNOWN"
}

// ParsePermission parses "allow" or "deny", any case.
func ParsePermission(s string) (Permission, error) {
	switch strings.ToUpper(s) {
	case "ALLOW":
		return PermissionAllow, nil
	case "DENY":
		return PermissionDeny, nil
	case "ANY":
		return PermissionAny, nil
	}
	return PermissionUnknown, fmt.Errorf("auth: unknown permission %q", s)
}

// ParsePatternType parses Kafka's pattern type names, any case.
func ParsePatternType(s string) (sdkauth.PatternType, error) {
	for p := sdkauth.PatternAny; p <= sdkauth.PatternPrefixed; p++ {
		if strings.EqualFold(p.String(), s) {
			return p, nil
		}
	}
	return sdkauth.PatternUnknown, fmt.Errorf("auth: unknown pattern type %q", s)
}

// Wildcards in ACLs.
const (
	WildcardResource  = "*"
	WildcardPrincipal = "User:*"
	WildcardHost      = "*"
)

// ACL is one access control entry bound to a resource pattern, Kafka's
// AclBinding.
type ACL struct {
	Resource   sdkauth.Resource
	Principal  string
	Host       string
	Operation  sdkauth.Operation
	Permission Permission
}

// String renders the binding the way kafka-acls prints it.
func (a ACL) String() string {
	return fmt.Sprintf("(resourceType=%s, name=%s, patternType=%s) (principal=%s, host=%s, operation=%s, permissionType=%s)",
		a.Resource.Type, a.Resource.Name, a.Resource.Pattern, a.Principal, a.Host, a.Operation, a.Permission)
}

// Validate applies Kafka's checks for a new ACL binding.
func (a ACL) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidACL, fmt.Sprintf(format, args...))
	}
	switch a.Resource.Type {
	case sdkauth.ResourceTopic, sdkauth.ResourceGroup, sdkauth.ResourceCluster, sdkauth.ResourceTransactionalID,
		sdkauth.ResourceDelegationToken, sdkauth.ResourceUser:
	default:
		return bad("resource type %s", a.Resource.Type)
	}
	if a.Resource.Pattern != sdkauth.PatternLiteral && a.Resource.Pattern != sdkauth.PatternPrefixed {
		return bad("pattern type %s", a.Resource.Pattern)
	}
	if a.Resource.Name == "" {
		return bad("resource name should not be empty")
	}
	if a.Resource.Type == sdkauth.ResourceCluster && a.Resource.Name != sdkauth.ClusterName {
		return bad("the cluster resource is named %q, not %q", sdkauth.ClusterName, a.Resource.Name)
	}
	if a.Operation <= sdkauth.OpAny || a.Operation > sdkauth.OpDescribeTokens {
		return bad("operation %s", a.Operation)
	}
	if a.Permission != PermissionAllow && a.Permission != PermissionDeny {
		return bad("permission type %s", a.Permission)
	}
	if _, err := sdkauth.ParsePrincipal(a.Principal); err != nil {
		return bad("%v", err)
	}
	if a.Host == "" {
		return bad("host should not be empty")
	}
	return nil
}

// Filter selects ACL bindings, Kafka's AclBindingFilter: nil strings and the
// ANY codes match everything; pattern MATCH matches the patterns that would
// apply to the named resource.
type Filter struct {
	ResourceType sdkauth.ResourceType
	Name         *string
	Pattern      sdkauth.PatternType
	Principal    *string
	Host         *string
	Operation    sdkauth.Operation
	Permission   Permission
}

// Validate rejects filters with UNKNOWN codes, as Kafka does.
func (f Filter) Validate() error {
	switch {
	case f.ResourceType <= sdkauth.ResourceUnknown || f.ResourceType > sdkauth.ResourceUser:
		return fmt.Errorf("%w: filter resource type %s", ErrInvalidACL, f.ResourceType)
	case f.Pattern <= sdkauth.PatternUnknown || f.Pattern > sdkauth.PatternPrefixed:
		return fmt.Errorf("%w: filter pattern type %s", ErrInvalidACL, f.Pattern)
	case f.Operation <= sdkauth.OpUnknown || f.Operation > sdkauth.OpDescribeTokens:
		return fmt.Errorf("%w: filter operation %s", ErrInvalidACL, f.Operation)
	case f.Permission <= PermissionUnknown || f.Permission > PermissionAllow:
		return fmt.Errorf("%w: filter permission type %s", ErrInvalidACL, f.Permission)
	}
	return nil
}

// Matches reports whether a matches the filter.
func (f Filter) Matches(a ACL) bool {
	if f.ResourceType != sdkauth.ResourceAny && f.ResourceType != a.Resource.Type {
		return false
	}
	if !f.matchesPattern(a.Resource) {
		return false
	}
	return (f.Principal == nil || *f.Principal == a.Principal) &&
		(f.Host == nil || *f.Host == a.Host) &&
		(f.Operation == sdkauth.OpAny || f.Operation == a.Operation) &&
		(f.Permission == PermissionAny || f.Permission == a.Permission)
}

func (f Filter) matchesPattern(r sdkauth.Resource) bool {
	if f.Pattern != sdkauth.PatternAny && f.Pattern != sdkauth.PatternMatch && f.Pattern != r.Pattern {
		return false
	}
	if f.Name == nil {
		return true
	}
	if f.Pattern == sdkauth.PatternAny || f.Pattern == r.Pattern {
		return *f.Name == r.Name
	}
	switch r.Pattern {
	case sdkauth.PatternLiteral:
		return *f.Name == r.Name || r.Name == WildcardResource
	case sdkauth.PatternPrefixed:
		return strings.HasPrefix(*f.Name, r.Name)
	}
	return false
}
