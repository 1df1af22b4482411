package main

import (
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/core/auth"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func TestACLBindings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		f       aclFlags
		want    []string
		wantErr string
	}{
		{"one of each", aclFlags{principals: []string{"User:alice"}, operations: []string{"read"}, topics: []string{"orders"},
			permission: "allow", pattern: "literal"},
			[]string{"(resourceType=TOPIC, name=orders, patternType=LITERAL) (principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"}, ""},
		{"cross product", aclFlags{principals: []string{"User:a", "User:b"}, hosts: []string{"10.0.0.1"}, operations: []string{"write", "describe-configs"},
			groups: []string{"g-"}, permission: "deny", pattern: "prefixed"},
			[]string{
				"(resourceType=GROUP, name=g-, patternType=PREFIXED) (principal=User:a, host=10.0.0.1, operation=WRITE, permissionType=DENY)",
				"(resourceType=GROUP, name=g-, patternType=PREFIXED) (principal=User:a, host=10.0.0.1, operation=DESCRIBE_CONFIGS, permissionType=DENY)",
				"(resourceType=GROUP, name=g-, patternType=PREFIXED) (principal=User:b, host=10.0.0.1, operation=WRITE, permissionType=DENY)",
				"(resourceType=GROUP, name=g-, patternType=PREFIXED) (principal=User:b, host=10.0.0.1, operation=DESCRIBE_CONFIGS, permissionType=DENY)",
			}, ""},
		{"cluster", aclFlags{principals: []string{"User:ops"}, operations: []string{"ALTER"}, cluster: true, permission: "allow", pattern: "literal"},
			[]string{"(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL) (principal=User:ops, host=*, operation=ALTER, permissionType=ALLOW)"}, ""},
		{"no principal", aclFlags{operations: []string{"read"}, topics: []string{"t"}, permission: "allow", pattern: "literal"}, nil, "--principal"},
		{"no operation", aclFlags{principals: []string{"User:a"}, topics: []string{"t"}, permission: "allow", pattern: "literal"}, nil, "--operation"},
		{"no resource", aclFlags{principals: []string{"User:a"}, operations: []string{"read"}, permission: "allow", pattern: "literal"}, nil, "name a resource"},
		{"bad operation", aclFlags{principals: []string{"User:a"}, operations: []string{"fly"}, topics: []string{"t"}, permission: "allow", pattern: "literal"}, nil, "unknown --operation"},
		{"any is not an operation", aclFlags{principals: []string{"User:a"}, operations: []string{"any"}, topics: []string{"t"}, permission: "allow", pattern: "literal"}, nil, "unknown --operation"},
		{"bad principal", aclFlags{principals: []string{"alice"}, operations: []string{"read"}, topics: []string{"t"}, permission: "allow", pattern: "literal"}, nil, "principal"},
		{"match pattern", aclFlags{principals: []string{"User:a"}, operations: []string{"read"}, topics: []string{"t"}, permission: "allow", pattern: "match"}, nil, "--pattern"},
		{"any permission", aclFlags{principals: []string{"User:a"}, operations: []string{"read"}, topics: []string{"t"}, permission: "any", pattern: "literal"}, nil, "--permission"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.f.bindings()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d bindings, want %d: %v", len(got), len(tc.want), got)
			}
			for i := range got {
				if got[i].String() != tc.want[i] {
					t.Errorf("binding %d = %s, want %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestACLFilters(t *testing.T) {
	orders := auth.ACL{Resource: sdkauth.Resource{Type: sdkauth.ResourceTopic, Name: "orders", Pattern: sdkauth.PatternLiteral},
		Principal: "User:alice", Host: "*", Operation: sdkauth.OpRead, Permission: auth.PermissionAllow}
	prefixed := auth.ACL{Resource: sdkauth.Resource{Type: sdkauth.ResourceTopic, Name: "ord", Pattern: sdkauth.PatternPrefixed},
		Principal: "User:bob", Host: "*", Operation: sdkauth.OpWrite, Permission: auth.PermissionDeny}
	for _, tc := range []struct {
		name    string
		f       aclFlags
		matches []bool // orders, prefixed
		wantErr string
	}{
		{"everything", aclFlags{permission: "any", pattern: "any"}, []bool{true, true}, ""},
		{"principal", aclFlags{principals: []string{"User:bob"}, permission: "any", pattern: "any"}, []bool{false, true}, ""},
		{"topic as written", aclFlags{topics: []string{"orders"}, permission: "any", pattern: "any"}, []bool{true, false}, ""},
		{"topic match", aclFlags{topics: []string{"orders"}, permission: "any", pattern: "match"}, []bool{true, true}, ""},
		{"deny only", aclFlags{permission: "deny", pattern: "any"}, []bool{false, true}, ""},
		{"operation", aclFlags{operations: []string{"read"}, permission: "any", pattern: "any"}, []bool{true, false}, ""},
		{"match needs a resource", aclFlags{permission: "any", pattern: "match"}, nil, "needs a named resource"},
		{"bad permission", aclFlags{permission: "maybe", pattern: "any"}, nil, "--permission"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := tc.f.filters()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range []auth.ACL{orders, prefixed} {
				got := false
				for _, f := range fs {
					got = got || f.Matches(a)
				}
				if got != tc.matches[i] {
					t.Errorf("matches %s = %v, want %v", a, got, tc.matches[i])
				}
			}
		})
	}
}
