package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ACLsTopic is the compacted target topic recording the ACLs this mirror
// created on the target (key: the binding, value "created"; a tombstone
// once deleted), so that an ACL deleted on the source is deleted on the
// target, and ACLs that others created on the target never are.
func ACLsTopic(source string) string { return source + ".acls.internal" }

// aclBinding is one topic ACL as the mirror compares them.
type aclBinding struct {
	resource   string
	pattern    kmsg.ACLResourcePatternType
	principal  string
	host       string
	operation  kmsg.ACLOperation
	permission kmsg.ACLPermissionType
}

// aclKey is a binding's record key in ACLsTopic.
type aclKey struct {
	Resource   string `json:"resource"`
	Pattern    int8   `json:"pattern"`
	Principal  string `json:"principal"`
	Host       string `json:"host"`
	Operation  int8   `json:"operation"`
	Permission int8   `json:"permission"`
}

func (b aclBinding) key() []byte {
	k, _ := json.Marshal(aclKey{b.resource, int8(b.pattern), b.principal, b.host, int8(b.operation), int8(b.permission)})
	return k
}

func decodeACLKey(k []byte) (aclBinding, error) {
	var ak aclKey
	if err := json.Unmarshal(k, &ak); err != nil {
		return aclBinding{}, fmt.Errorf("mirror: acl record key: %w: %w", ErrCorruptRecord, err)
	}
	return aclBinding{resource: ak.Resource, pattern: kmsg.ACLResourcePatternType(ak.Pattern), principal: ak.Principal,
		host: ak.Host, operation: kmsg.ACLOperation(ak.Operation), permission: kmsg.ACLPermissionType(ak.Permission)}, nil
}

// mirroredACL turns a source topic ACL into its target form. ALLOW ACLs
// are copied as MirrorMaker 2 copies them: never WRITE (only the mirror
// writes mirrored topics), ALL becomes READ. DENY ACLs are copied too, so
// that a revocation on the source holds on the target, except what would
// stop the mirror itself: DENY WRITE is not copied, DENY ALL becomes DENY
// READ, and nothing denying the mirror's own principal (self) is. The
// resource is renamed like its topic. ok is false for ACLs not copied.
func (p policy) mirroredACL(b aclBinding, mirrored []string, self string) (aclBinding, bool) {
	switch b.operation {
	case kmsg.ACLOperationWrite:
		return aclBinding{}, false
	case kmsg.ACLOperationAll:
		b.operation = kmsg.ACLOperationRead
	}
	if b.permission == kmsg.ACLPermissionTypeDeny && self != "" && b.principal == self {
		return aclBinding{}, false
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

// describeTopicACLs lists the topic ACLs (ALLOW and DENY) of a cluster.
func describeTopicACLs(ctx context.Context, req func(context.Context, kmsg.Request) (kmsg.Response, error)) ([]aclBinding, error) {
	d := kmsg.NewPtrDescribeACLsRequest()
	d.ResourceType = kmsg.ACLResourceTypeTopic
	d.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	d.Operation = kmsg.ACLOperationAny
	d.PermissionType = kmsg.ACLPermissionTypeAny
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
				principal: a.Principal, host: a.Host, operation: a.Operation, permission: a.PermissionType})
		}
	}
	return out, nil
}

// selfPrincipal is the principal the mirror has on the target, as far as
// its configuration tells ("" when it cannot).
func (s *session) selfPrincipal() string {
	if s.cfg.Target.SASLUsername != "" {
		return "User:" + s.cfg.Target.SASLUsername
	}
	return ""
}

// syncACLs makes the target hold the mirrored form of the source's topic
// ACLs: it creates those missing and deletes those it created earlier that
// the source no longer has. A cluster without an authorizer
// (SECURITY_DISABLED) turns ACL sync off for the session.
func (s *session) syncACLs(ctx context.Context, mirrored []string) {
	err := s.syncACLsOnce(ctx, mirrored)
	if errors.Is(err, kerr.SecurityDisabled) {
		s.aclsOff = true
		s.m.log.Info("ACL sync off: a cluster has no authorizer")
		return
	}
	if err != nil {
		s.m.log.Warn("ACL sync failed", "err", err)
	}
}

func (s *session) syncACLsOnce(ctx context.Context, mirrored []string) error {
	src, err := describeTopicACLs(ctx, s.src.Request)
	if err != nil {
		return err
	}
	dst, err := describeTopicACLs(ctx, s.dst.Request)
	if err != nil {
		return err
	}
	if s.createdACLs == nil {
		if s.createdACLs, err = s.loadCreatedACLs(ctx); err != nil {
			return err
		}
	}
	have := map[aclBinding]bool{}
	for _, b := range dst {
		have[b] = true
	}
	want := map[aclBinding]bool{}
	var create []aclBinding
	for _, b := range src {
		out, ok := s.m.pol.mirroredACL(b, mirrored, s.selfPrincipal())
		if !ok || want[out] {
			continue
		}
		want[out] = true
		if !have[out] {
			create = append(create, out)
		}
	}
	var remove []aclBinding
	for b := range s.createdACLs {
		if !want[b] {
			remove = append(remove, b)
		}
	}
	if err := s.createACLs(ctx, create); err != nil {
		return err
	}
	return s.deleteACLs(ctx, remove, have)
}

// loadCreatedACLs reads the ACLs this mirror created from ACLsTopic.
func (s *session) loadCreatedACLs(ctx context.Context) (map[aclBinding]bool, error) {
	out := map[aclBinding]bool{}
	err := readAll(ctx, s.cfg.Target, ACLsTopic(s.cfg.Source.Name), maxSyncRecords, func(r *kgo.Record) error {
		b, err := decodeACLKey(r.Key)
		if err != nil {
			s.m.log.Warn("ignoring ACL record", "offset", r.Offset, "err", err)
			return nil
		}
		if r.Value == nil {
			delete(out, b)
		} else {
			out[b] = true
		}
		return nil
	})
	return out, err
}

// recordACLs writes the records of created (value) or deleted (tombstone)
// bindings.
func (s *session) recordACLs(ctx context.Context, bs []aclBinding, created bool) error {
	recs := make([]*kgo.Record, 0, len(bs))
	for _, b := range bs {
		r := &kgo.Record{Topic: ACLsTopic(s.cfg.Source.Name), Partition: 0, Key: b.key()}
		if created {
			r.Value = []byte("created")
		}
		recs = append(recs, r)
	}
	if err := s.dst.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("mirror: record synced ACLs: %w", err)
	}
	return nil
}

// createACLs records, then creates, bindings on the target: a crash in
// between leaves a record of an ACL that the next sync creates or, when
// the source no longer has it, deletes (a no-op), never an ACL unrecorded.
func (s *session) createACLs(ctx context.Context, bs []aclBinding) error {
	if len(bs) == 0 {
		return nil
	}
	if err := s.recordACLs(ctx, bs, true); err != nil {
		return err
	}
	req := kmsg.NewPtrCreateACLsRequest()
	for _, b := range bs {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType = kmsg.ACLResourceTypeTopic
		c.ResourceName = b.resource
		c.ResourcePatternType = b.pattern
		c.Principal = b.principal
		c.Host = b.host
		c.Operation = b.operation
		c.PermissionType = b.permission
		req.Creations = append(req.Creations, c)
		s.createdACLs[b] = true
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

// deleteACLs deletes bindings this mirror created, each matched exactly,
// then records their deletion.
func (s *session) deleteACLs(ctx context.Context, bs []aclBinding, present map[aclBinding]bool) error {
	if len(bs) == 0 {
		return nil
	}
	req := kmsg.NewPtrDeleteACLsRequest()
	for _, b := range bs {
		if !present[b] {
			continue // recorded but never created, or deleted by hand
		}
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType = kmsg.ACLResourceTypeTopic
		f.ResourceName = kmsg.StringPtr(b.resource)
		f.ResourcePatternType = b.pattern
		f.Principal = kmsg.StringPtr(b.principal)
		f.Host = kmsg.StringPtr(b.host)
		f.Operation = b.operation
		f.PermissionType = b.permission
		req.Filters = append(req.Filters, f)
	}
	if len(req.Filters) > 0 {
		resp, err := req.RequestWith(ctx, s.dst)
		if err != nil {
			return err
		}
		for _, r := range resp.Results {
			if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
				return err
			}
		}
	}
	if err := s.recordACLs(ctx, bs, false); err != nil {
		return err
	}
	for _, b := range bs {
		delete(s.createdACLs, b)
	}
	s.m.log.Info("deleted topic ACLs deleted on the source", "deleted", len(req.Filters))
	return nil
}
