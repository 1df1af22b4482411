package auth

import (
	"context"
	"strings"
	"sync/atomic"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ACLAuthorizer is Kafka's ACL authorizer: super users may do anything; a
// DENY that matches wins; otherwise an ALLOW for the operation, or for one
// that implies it, is needed; a resource with no ACLs at all is open only
// when AllowEveryoneIfNoACL is set.
type ACLAuthorizer struct {
	superUsers map[string]bool
	allowIfNo  bool
	index      atomic.Pointer[aclIndex]
}

var _ sdkauth.Authorizer = (*ACLAuthorizer)(nil)

// NewACLAuthorizer returns an authorizer with no ACLs.
func NewACLAuthorizer(superUsers []string, allowEveryoneIfNoACL bool) *ACLAuthorizer {
	a := &ACLAuthorizer{superUsers: map[string]bool{}, allowIfNo: allowEveryoneIfNoACL}
	for _, u := range superUsers {
		a.superUsers[u] = true
	}
	a.index.Store(buildIndex(nil))
	return a
}

// SetACLs replaces the ACLs; readers see the old or the new set, whole.
func (a *ACLAuthorizer) SetACLs(acls []ACL) { a.index.Store(buildIndex(acls)) }

// Authorize implements sdk/auth's Authorizer.
func (a *ACLAuthorizer) Authorize(_ context.Context, actions []sdkauth.Action, decisions []sdkauth.Decision) error {
	if err := sdkauth.CheckBatch(actions, decisions); err != nil {
		return err
	}
	idx := a.index.Load()
	for i, act := range actions {
		decisions[i] = sdkauth.Deny
		if a.allowed(idx, act) {
			decisions[i] = sdkauth.Allow
		}
	}
	return nil
}

// Allowed decides one action.
func (a *ACLAuthorizer) Allowed(act sdkauth.Action) bool { return a.allowed(a.index.Load(), act) }

func (a *ACLAuthorizer) allowed(idx *aclIndex, act sdkauth.Action) bool {
	principal := act.Principal.String()
	if a.superUsers[principal] {
		return true
	}
	acls := idx.matching(act.Resource.Type, act.Resource.Name)
	if len(acls) == 0 {
		return a.allowIfNo
	}
	for _, e := range acls {
		if e.Permission == PermissionDeny && entryApplies(e, principal, act.Host) &&
			(e.Operation == act.Operation || e.Operation == sdkauth.OpAll) {
			return false
		}
	}
	for _, e := range acls {
		if e.Permission == PermissionAllow && entryApplies(e, principal, act.Host) && implies(e.Operation, act.Operation) {
			return true
		}
	}
	return false
}

func entryApplies(e ACL, principal, host string) bool {
	return (e.Principal == principal || e.Principal == WildcardPrincipal) && (e.Host == host || e.Host == WildcardHost)
}

// implies reports whether an ALLOW for granted permits op: ALL permits
// everything, Read/Write/Delete/Alter imply Describe, AlterConfigs implies
// DescribeConfigs.
func implies(granted, op sdkauth.Operation) bool {
	if granted == op || granted == sdkauth.OpAll {
		return true
	}
	switch op {
	case sdkauth.OpDescribe:
		return granted == sdkauth.OpRead || granted == sdkauth.OpWrite || granted == sdkauth.OpDelete || granted == sdkauth.OpAlter
	case sdkauth.OpDescribeConfigs:
		return granted == sdkauth.OpAlterConfigs
	}
	return false
}

// aclIndex groups ACLs by resource type: literal ones by name, prefixed
// ones in a list. It is immutable.
type aclIndex struct {
	literal  map[sdkauth.ResourceType]map[string][]ACL
	prefixed map[sdkauth.ResourceType][]ACL
}

func buildIndex(acls []ACL) *aclIndex {
	idx := &aclIndex{literal: map[sdkauth.ResourceType]map[string][]ACL{}, prefixed: map[sdkauth.ResourceType][]ACL{}}
	for _, a := range acls {
		t := a.Resource.Type
		if a.Resource.Pattern == sdkauth.PatternPrefixed {
			idx.prefixed[t] = append(idx.prefixed[t], a)
			continue
		}
		if idx.literal[t] == nil {
			idx.literal[t] = map[string][]ACL{}
		}
		idx.literal[t][a.Resource.Name] = append(idx.literal[t][a.Resource.Name], a)
	}
	return idx
}

// matching returns the ACLs whose pattern covers the named resource.
func (idx *aclIndex) matching(t sdkauth.ResourceType, name string) []ACL {
	var out []ACL
	out = append(out, idx.literal[t][name]...)
	if name != WildcardResource {
		out = append(out, idx.literal[t][WildcardResource]...)
	}
	for _, a := range idx.prefixed[t] {
		if strings.HasPrefix(name, a.Resource.Name) {
			out = append(out, a)
		}
	}
	return out
}

// AllowedByResourceType reports whether act.Principal may perform
// act.Operation on at least one resource of act.Resource.Type (the name and
// pattern are ignored): Kafka's authorizeByResourceType (KIP-679), which
// lets an idempotent producer in without IDEMPOTENT_WRITE when it may write
// to some topic. Super users may; a matching DENY on the literal wildcard
// forbids everything; otherwise some ALLOW (for the operation or ALL) must
// name a literal resource not denied literally, or a pattern no prefixed
// DENY dominates.
func (a *ACLAuthorizer) AllowedByResourceType(act sdkauth.Action) bool {
	probe := act
	probe.Resource = sdkauth.Resource{Type: act.Resource.Type, Name: "hardcode", Pattern: sdkauth.PatternLiteral}
	idx := a.index.Load()
	if a.allowed(idx, probe) {
		return true
	}
	principal := act.Principal.String()
	denyLiteral, denyPrefixed := map[string]bool{}, map[string]bool{}
	var allows []sdkauth.Resource
	consider := func(e ACL) bool {
		if !entryApplies(e, principal, act.Host) || (e.Operation != act.Operation && e.Operation != sdkauth.OpAll) {
			return true
		}
		switch {
		case e.Permission == PermissionDeny && e.Resource.Pattern == sdkauth.PatternPrefixed:
			denyPrefixed[e.Resource.Name] = true
		case e.Permission == PermissionDeny && e.Resource.Name == WildcardResource:
			return false
		case e.Permission == PermissionDeny:
			denyLiteral[e.Resource.Name] = true
		case e.Permission == PermissionAllow:
			allows = append(allows, e.Resource)
		}
		return true
	}
	for _, byName := range idx.literal[act.Resource.Type] {
		for _, e := range byName {
			if !consider(e) {
				return false
			}
		}
	}
	for _, e := range idx.prefixed[act.Resource.Type] {
		consider(e)
	}
	for _, r := range allows {
		if r.Pattern == sdkauth.PatternLiteral && r.Name == WildcardResource {
			return true
		}
	}
	for _, r := range allows {
		if r.Pattern == sdkauth.PatternLiteral && denyLiteral[r.Name] {
			continue
		}
		dominated := false
		for i := 1; i <= len(r.Name); i++ {
			if denyPrefixed[r.Name[:i]] {
				dominated = true
				break
			}
		}
		if !dominated {
			return true
		}
	}
	return false
}
