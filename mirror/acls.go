package mirror

import (
	"context"
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclBinding is one ALLOW topic ACL as the mirror compares them.
type aclBinding struct {
	resource  string
	pattern   kmsg.ACLResourcePatternType
	principal string
	host      string
	operation kmsg.ACLOperation
}

// mirroredACL turns a source topic ACL into its target form, as MirrorMaker 2
// does: ALLOW only, never WRITE (only the mirror writes mirrored topics), ALL
// becomes READ, and the resource is renamed like its topic. ok is false for
// ACLs that are not copied.
func (p policy) mirroredACL(b aclBinding, mirrored []string) (aclBinding, bool) {
	switch b.operation {
	case kmsg.ACLOperationWrite:
		return aclBinding{}, false
	case kmsg.ACLOperationAll:
		b.operation = kmsg.ACLOperationRead
	}
	switch b.pattern {
	case kmsg.ACLResourcePatternTypeLiteral:
		if b.resource == "*" {
			return b, true
		}
		for _, t := range mirrored {
			if t == b.resource {
				b.resource = p.TargetTopic(b.resource)
				return b, true
			}
		}
		return aclBinding{}, false
	case kmsg.ACLResourcePatternTypePrefixed:
		for _, t := range mirrored {
			if strings.HasPrefix(t, b.resource) {
				b.resource = p.TargetTopic(b.resource)
				return b, true
			}
		}
	}
	return aclBinding{}, false
}

// describeTopicACLs lists the ALLOW topic ACLs of a cluster.
func describeTopicACLs(ctx context.Context, req func(context.Context, kmsg.Request) (kmsg.Response, error)) ([]aclBinding, error) {
	d := kmsg.NewPtrDescribeACLsRequest()
	d.ResourceType = kmsg.ACLResourceTypeTopic
	d.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	d.Operation = kmsg.ACLOperationAny
	d.PermissionType = kmsg.ACLPermissionTypeAllow
	resp, err := req(ctx, d)
	if err != nil {
		return nil, err
	}
	r := resp.(*kmsg.DescribeACLsResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return nil, err
	}
	var out []aclBinding
	for _, res := range r.Resources {
		for _, a := range res.ACLs {
			out = append(out, aclBinding{resource: res.ResourceName, pattern: res.ResourcePatternType,
				principal: a.Principal, host: a.Host, operation: a.Operation})
		}
	}
	return out, nil
}

// syncACLs creates on the target the mirrored form of source topic ACLs it
// lacks. A cluster without an authorizer (SECURITY_DISABLED) turns ACL sync
// off for the session.
func (s *session) syncACLs(ctx context.Context, mirrored []string) {
	src, err := describeTopicACLs(ctx, s.src.Request)
	if err == nil {
		var dst []aclBinding
		dst, err = describeTopicACLs(ctx, s.dst.Request)
		if err == nil {
			err = s.createMissingACLs(ctx, src, dst, mirrored)
		}
	}
	if errors.Is(err, kerr.SecurityDisabled) {
		s.aclsOff = true
		s.m.log.Info("ACL sync off: a cluster has no authorizer")
		return
	}
	if err != nil {
		s.m.log.Warn("ACL sync failed", "err", err)
	}
}

func (s *session) createMissingACLs(ctx context.Context, src, dst []aclBinding, mirrored []string) error {
	have := map[aclBinding]bool{}
	for _, b := range dst {
		have[b] = true
	}
	req := kmsg.NewPtrCreateACLsRequest()
	for _, b := range src {
		out, ok := s.m.pol.mirroredACL(b, mirrored)
		if !ok || have[out] {
			continue
		}
		have[out] = true
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType = kmsg.ACLResourceTypeTopic
		c.ResourceName = out.resource
		c.ResourcePatternType = out.pattern
		c.Principal = out.principal
		c.Host = out.host
		c.Operation = out.operation
		c.PermissionType = kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, c)
	}
	if len(req.Creations) == 0 {
		return nil
	}
	resp, err := req.RequestWith(ctx, s.dst)
	if err != nil {
		return err
	}
	for _, r := range resp.Results {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return err
		}
	}
	s.m.log.Info("synced topic ACLs", "created", len(req.Creations))
	return nil
}
