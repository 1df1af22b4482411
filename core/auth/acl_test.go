package auth

import (
	"context"
	"errors"
	"testing"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func topic(name string, p sdkauth.PatternType) sdkauth.Resource {
	return sdkauth.Resource{Type: sdkauth.ResourceTopic, Name: name, Pattern: p}
}

func acl(res sdkauth.Resource, principal, host string, op sdkauth.Operation, perm Permission) ACL {
	return ACL{Resource: res, Principal: principal, Host: host, Operation: op, Permission: perm}
}

// TestACLMatrix checks principal × operation × resource × pattern against
// Kafka's documented rules.
func TestACLMatrix(t *testing.T) {
	lit, pre := sdkauth.PatternLiteral, sdkauth.PatternPrefixed
	acls := []ACL{
		acl(topic("orders", lit), "User:alice", "*", sdkauth.OpRead, PermissionAllow),
		acl(topic("orders", lit), "User:bob", "*", sdkauth.OpWrite, PermissionAllow),
		acl(topic("orders", lit), "User:bob", "10.0.0.9", sdkauth.OpWrite, PermissionDeny),
		acl(topic("pay-", pre), "User:carol", "*", sdkauth.OpAll, PermissionAllow),
		acl(topic("pay-secret", lit), "User:carol", "*", sdkauth.OpRead, PermissionDeny),
		acl(topic("*", lit), "User:*", "*", sdkauth.OpDescribe, PermissionAllow),
		acl(topic("cfg", lit), "User:dave", "*", sdkauth.OpAlterConfigs, PermissionAllow),
		acl(topic("cfg", lit), "User:erin", "*", sdkauth.OpDescribe, PermissionDeny),
		acl(topic("cfg", lit), "User:erin", "*", sdkauth.OpRead, PermissionAllow),
		acl(sdkauth.Resource{Type: sdkauth.ResourceGroup, Name: "g", Pattern: lit}, "User:alice", "*", sdkauth.OpRead, PermissionAllow),
		acl(sdkauth.Resource{Type: sdkauth.ResourceCluster, Name: "kafka-cluster", Pattern: lit}, "User:ops", "*", sdkauth.OpAlter, PermissionAllow),
	}
	for _, a := range acls {
		if err := a.Validate(); err != nil {
			t.Fatalf("%v: %v", a, err)
		}
	}
	z := NewACLAuthorizer([]string{"User:admin"}, false)
	z.SetACLs(acls)
	open := NewACLAuthorizer(nil, true)
	open.SetACLs(acls)
	for _, tc := range []struct {
		name      string
		az        *ACLAuthorizer
		principal string
		host      string
		op        sdkauth.Operation
		res       sdkauth.Resource
		want      bool
	}{
		{"literal allow", z, "User:alice", "1.1.1.1", sdkauth.OpRead, topic("orders", lit), true},
		{"other op not allowed", z, "User:alice", "1.1.1.1", sdkauth.OpWrite, topic("orders", lit), false},
		{"read implies describe", z, "User:alice", "1.1.1.1", sdkauth.OpDescribe, topic("orders", lit), true},
		{"write implies describe", z, "User:bob", "1.1.1.1", sdkauth.OpDescribe, topic("orders", lit), true},
		{"other principal", z, "User:mallory", "1.1.1.1", sdkauth.OpRead, topic("orders", lit), false},
		{"deny from host wins", z, "User:bob", "10.0.0.9", sdkauth.OpWrite, topic("orders", lit), false},
		{"allow from other host", z, "User:bob", "10.0.0.8", sdkauth.OpWrite, topic("orders", lit), true},
		{"prefixed all", z, "User:carol", "h", sdkauth.OpWrite, topic("pay-in", lit), true},
		{"prefixed all implies describe", z, "User:carol", "h", sdkauth.OpDescribe, topic("pay-in", lit), true},
		{"prefix must match", z, "User:carol", "h", sdkauth.OpWrite, topic("pa", lit), false},
		{"literal deny beats prefixed allow", z, "User:carol", "h", sdkauth.OpRead, topic("pay-secret", lit), false},
		{"deny read does not deny write", z, "User:carol", "h", sdkauth.OpWrite, topic("pay-secret", lit), true},
		{"wildcard resource and principal describe", z, "User:zed", "h", sdkauth.OpDescribe, topic("anything", lit), true},
		{"wildcard describe does not imply read", z, "User:zed", "h", sdkauth.OpRead, topic("anything", lit), false},
		{"alter configs implies describe configs", z, "User:dave", "h", sdkauth.OpDescribeConfigs, topic("cfg", lit), true},
		{"alter configs does not imply describe", z, "User:dave", "h", sdkauth.OpAlter, topic("cfg", lit), false},
		{"explicit deny describe beats implied", z, "User:erin", "h", sdkauth.OpDescribe, topic("cfg", lit), false},
		{"super user", z, "User:admin", "h", sdkauth.OpDelete, topic("orders", lit), true},
		{"group literal", z, "User:alice", "h", sdkauth.OpRead, sdkauth.Resource{Type: sdkauth.ResourceGroup, Name: "g", Pattern: lit}, true},
		{"group other name, no acls", z, "User:alice", "h", sdkauth.OpRead, sdkauth.Resource{Type: sdkauth.ResourceGroup, Name: "h", Pattern: lit}, false},
		{"no acls, allow everyone", open, "User:alice", "h", sdkauth.OpRead, sdkauth.Resource{Type: sdkauth.ResourceGroup, Name: "h", Pattern: lit}, true},
		{"acls exist, allow everyone does not apply", open, "User:mallory", "h", sdkauth.OpRead, topic("orders", lit), false},
		{"cluster alter", z, "User:ops", "h", sdkauth.OpAlter, sdkauth.Resource{Type: sdkauth.ResourceCluster, Name: "kafka-cluster", Pattern: lit}, true},
		{"cluster create", z, "User:ops", "h", sdkauth.OpCreate, sdkauth.Resource{Type: sdkauth.ResourceCluster, Name: "kafka-cluster", Pattern: lit}, false},
		{"transactional id, no acls", z, "User:ops", "h", sdkauth.OpWrite, sdkauth.Resource{Type: sdkauth.ResourceTransactionalID, Name: "tx", Pattern: lit}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sdkauth.ParsePrincipal(tc.principal)
			if err != nil {
				t.Fatal(err)
			}
			act := sdkauth.Action{Principal: p, Host: tc.host, Operation: tc.op, Resource: tc.res}
			if got := tc.az.Allowed(act); got != tc.want {
				t.Fatalf("allowed %v, want %v", got, tc.want)
			}
			d := make([]sdkauth.Decision, 1)
			if err := tc.az.Authorize(context.Background(), []sdkauth.Action{act}, d); err != nil {
				t.Fatal(err)
			}
			if (d[0] == sdkauth.Allow) != tc.want {
				t.Fatalf("batch decision %v", d[0])
			}
		})
	}
}

func TestACLValidate(t *testing.T) {
	good := acl(topic("t", sdkauth.PatternLiteral), "User:a", "*", sdkauth.OpRead, PermissionAllow)
	for _, tc := range []struct {
		name   string
		mutate func(*ACL)
	}{
		{"any resource type", func(a *ACL) { a.Resource.Type = sdkauth.ResourceAny }},
		{"match pattern", func(a *ACL) { a.Resource.Pattern = sdkauth.PatternMatch }},
		{"empty name", func(a *ACL) { a.Resource.Name = "" }},
		{"cluster name", func(a *ACL) {
			a.Resource = sdkauth.Resource{Type: sdkauth.ResourceCluster, Name: "c", Pattern: sdkauth.PatternLiteral}
		}},
		{"any op", func(a *ACL) { a.Operation = sdkauth.OpAny }},
		{"any permission", func(a *ACL) { a.Permission = PermissionAny }},
		{"principal without type", func(a *ACL) { a.Principal = "alice" }},
		{"empty host", func(a *ACL) { a.Host = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := good
			tc.mutate(&a)
			if err := a.Validate(); !errors.Is(err, ErrInvalidACL) {
				t.Fatalf("err %v", err)
			}
		})
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestFilterMatches(t *testing.T) {
	s := func(v string) *string { return &v }
	lit := acl(topic("orders", sdkauth.PatternLiteral), "User:a", "*", sdkauth.OpRead, PermissionAllow)
	wild := acl(topic("*", sdkauth.PatternLiteral), "User:a", "*", sdkauth.OpRead, PermissionAllow)
	pre := acl(topic("ord", sdkauth.PatternPrefixed), "User:b", "h", sdkauth.OpWrite, PermissionDeny)
	any := Filter{ResourceType: sdkauth.ResourceAny, Pattern: sdkauth.PatternAny, Operation: sdkauth.OpAny, Permission: PermissionAny}
	for _, tc := range []struct {
		name string
		f    func(Filter) Filter
		want [3]bool // lit, wild, pre
	}{
		{"any", func(f Filter) Filter { return f }, [3]bool{true, true, true}},
		{"name with any pattern is exact", func(f Filter) Filter { f.Name = s("orders"); return f }, [3]bool{true, false, false}},
		{"match pattern", func(f Filter) Filter { f.Name = s("orders"); f.Pattern = sdkauth.PatternMatch; return f }, [3]bool{true, true, true}},
		{"match other name", func(f Filter) Filter { f.Name = s("x"); f.Pattern = sdkauth.PatternMatch; return f }, [3]bool{false, true, false}},
		{"literal only", func(f Filter) Filter { f.Pattern = sdkauth.PatternLiteral; return f }, [3]bool{true, true, false}},
		{"prefixed by name", func(f Filter) Filter { f.Pattern = sdkauth.PatternPrefixed; f.Name = s("ord"); return f }, [3]bool{false, false, true}},
		{"principal", func(f Filter) Filter { f.Principal = s("User:b"); return f }, [3]bool{false, false, true}},
		{"host", func(f Filter) Filter { f.Host = s("*"); return f }, [3]bool{true, true, false}},
		{"operation", func(f Filter) Filter { f.Operation = sdkauth.OpWrite; return f }, [3]bool{false, false, true}},
		{"permission", func(f Filter) Filter { f.Permission = PermissionAllow; return f }, [3]bool{true, true, false}},
		{"group type", func(f Filter) Filter { f.ResourceType = sdkauth.ResourceGroup; return f }, [3]bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f(any)
			if err := f.Validate(); err != nil {
				t.Fatal(err)
			}
			got := [3]bool{f.Matches(lit), f.Matches(wild), f.Matches(pre)}
			if got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	if err := (Filter{}).Validate(); !errors.Is(err, ErrInvalidACL) {
		t.Fatalf("unknown codes accepted: %v", err)
	}
}

// TestAllowedByResourceType checks KIP-679's "may do op on some resource of
// the type" against Kafka's rules for dominating denies.
func TestAllowedByResourceType(t *testing.T) {
	lit, pre := sdkauth.PatternLiteral, sdkauth.PatternPrefixed
	w := sdkauth.OpWrite
	for _, tc := range []struct {
		name string
		acls []ACL
		user string
		want bool
	}{
		{"no acls", nil, "User:a", false},
		{"literal allow", []ACL{acl(topic("t", lit), "User:a", "*", w, PermissionAllow)}, "User:a", true},
		{"allow for another principal", []ACL{acl(topic("t", lit), "User:b", "*", w, PermissionAllow)}, "User:a", false},
		{"wildcard principal", []ACL{acl(topic("t", lit), "User:*", "*", w, PermissionAllow)}, "User:a", true},
		{"allow of another op", []ACL{acl(topic("t", lit), "User:a", "*", sdkauth.OpRead, PermissionAllow)}, "User:a", false},
		{"allow all ops", []ACL{acl(topic("t", lit), "User:a", "*", sdkauth.OpAll, PermissionAllow)}, "User:a", true},
		{"literal deny of the same name", []ACL{
			acl(topic("t", lit), "User:a", "*", w, PermissionAllow),
			acl(topic("t", lit), "User:a", "*", w, PermissionDeny)}, "User:a", false},
		{"prefixed deny dominates", []ACL{
			acl(topic("team-x", lit), "User:a", "*", w, PermissionAllow),
			acl(topic("team-", pre), "User:a", "*", w, PermissionDeny)}, "User:a", false},
		{"prefixed deny does not dominate a shorter prefix", []ACL{
			acl(topic("team", pre), "User:a", "*", w, PermissionAllow),
			acl(topic("team-", pre), "User:a", "*", w, PermissionDeny)}, "User:a", true},
		{"wildcard deny", []ACL{
			acl(topic("t", lit), "User:a", "*", w, PermissionAllow),
			acl(topic("*", lit), "User:a", "*", w, PermissionDeny)}, "User:a", false},
		{"wildcard allow", []ACL{acl(topic("*", lit), "User:a", "*", w, PermissionAllow)}, "User:a", true},
		{"deny for another host", []ACL{
			acl(topic("t", lit), "User:a", "*", w, PermissionAllow),
			acl(topic("t", lit), "User:a", "9.9.9.9", w, PermissionDeny)}, "User:a", true},
		{"super user", nil, "User:admin", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := NewACLAuthorizer([]string{"User:admin"}, false)
			z.SetACLs(tc.acls)
			p, err := sdkauth.ParsePrincipal(tc.user)
			if err != nil {
				t.Fatal(err)
			}
			act := sdkauth.Action{Principal: p, Host: "1.2.3.4", Operation: w, Resource: sdkauth.Resource{Type: sdkauth.ResourceTopic}}
			if got := z.AllowedByResourceType(act); got != tc.want {
				t.Fatalf("AllowedByResourceType = %v, want %v", got, tc.want)
			}
		})
	}
}
