package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Security record types (see the package doc).
const (
	typeCreateACLs     = "create_acls"
	typeDeleteACLs     = "delete_acls"
	typeScramSet       = "set_scram_credential"
	typeScramDelete    = "delete_scram_credential"
	typeSetClientQuota = "set_client_quota"
)

// ErrNoCredential: RESOURCE_NOT_FOUND, a SCRAM credential to delete does
// not exist.
var ErrNoCredential = errors.New("no such SCRAM credential")

// ACLBinding is a stored ACL with Kafka's codes. The api layer validates a
// binding with core/auth before it is proposed.
type ACLBinding struct {
	ResourceType int8   `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  int8   `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    int8   `json:"operation"`
	Permission   int8   `json:"permission"`
}

func aclLess(a, b ACLBinding) int {
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func checkACL(a ACLBinding) error {
	if a.ResourceName == "" || a.Principal == "" || a.Host == "" || a.ResourceType <= 1 || a.PatternType <= 2 ||
		a.Operation <= 1 || a.Permission <= 1 {
		return fmt.Errorf("controller: ACL %+v: %w", a, ErrInvalidRequest)
	}
	return nil
}

// ScramCredential is a user's salted SCRAM credential; the password is
// never stored.
type ScramCredential struct {
	User       string `json:"user"`
	Mechanism  int8   `json:"mechanism"`
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
	Iterations int32  `json:"iterations"`
}

// QuotaEntityPart is one component of a client quota entity: a type
// ("user", "client-id", "ip") and a name; Default means Kafka's null name,
// the default entity of that type.
type QuotaEntityPart struct {
	Type    string `json:"type"`
	Name    string `json:"name,omitempty"`
	Default bool   `json:"default,omitempty"`
}

// QuotaEntity is a client quota entity with its parts sorted by type.
type QuotaEntity []QuotaEntityPart

// Key is the entity's canonical text form.
func (e QuotaEntity) Key() string {
	parts := make([]string, len(e))
	for i, p := range e {
		if p.Default {
			parts[i] = p.Type + "=<default>"
		} else {
			parts[i] = p.Type + "=" + strings.ReplaceAll(p.Name, ",", "\\,")
		}
	}
	return strings.Join(parts, ",")
}

// Normalize sorts the parts and rejects duplicate or empty types.
func (e QuotaEntity) Normalize() (QuotaEntity, error) {
	out := slices.Clone(e)
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	if len(out) == 0 {
		return nil, fmt.Errorf("controller: quota entity: %w: no components", ErrInvalidRequest)
	}
	for i, p := range out {
		if p.Type == "" || i > 0 && out[i-1].Type == p.Type {
			return nil, fmt.Errorf("controller: quota entity %q: %w: empty or repeated type", e.Key(), ErrInvalidRequest)
		}
		if p.Default && p.Name != "" {
			return nil, fmt.Errorf("controller: quota entity %q: %w: a default entity has no name", e.Key(), ErrInvalidRequest)
		}
	}
	return out, nil
}

// ClientQuota is one entity's quota values ("producer_byte_rate" ...).
type ClientQuota struct {
	Entity QuotaEntity        `json:"entity"`
	Values map[string]float64 `json:"values"`
}

type createACLsRecord struct {
	ACLs []ACLBinding `json:"acls"`
}

func (*createACLsRecord) kind() string { return typeCreateACLs }

func (r *createACLsRecord) apply(b *builder, _ uint64) error {
	for _, a := range r.ACLs {
		if err := checkACL(a); err != nil {
			return err
		}
	}
	next := slices.Clone(b.im.ACLs)
	for _, a := range r.ACLs {
		if i, found := slices.BinarySearchFunc(next, a, aclLess); !found {
			next = slices.Insert(next, i, a)
		}
	}
	b.im.ACLs = next
	return nil
}

type deleteACLsRecord struct {
	ACLs []ACLBinding `json:"acls"`
}

func (*deleteACLsRecord) kind() string { return typeDeleteACLs }

func (r *deleteACLsRecord) apply(b *builder, _ uint64) error {
	next := slices.Clone(b.im.ACLs)
	for _, a := range r.ACLs {
		if i, found := slices.BinarySearchFunc(next, a, aclLess); found {
			next = slices.Delete(next, i, i+1)
		}
	}
	b.im.ACLs = next
	return nil
}

type scramSetRecord struct {
	ScramCredential
}

func (*scramSetRecord) kind() string { return typeScramSet }

func (r *scramSetRecord) apply(b *builder, _ uint64) error {
	c := r.ScramCredential
	if c.User == "" || c.Mechanism < 1 || c.Mechanism > 2 || len(c.Salt) == 0 || len(c.StoredKey) == 0 || len(c.ServerKey) == 0 || c.Iterations < 1 {
		return fmt.Errorf("controller: SCRAM credential for %q: %w", c.User, ErrInvalidRequest)
	}
	next := maps.Clone(b.im.Scram)
	if next == nil {
		next = map[string]map[int8]ScramCredential{}
	}
	user := maps.Clone(next[c.User])
	if user == nil {
		user = map[int8]ScramCredential{}
	}
	user[c.Mechanism] = c
	next[c.User] = user
	b.im.Scram = next
	return nil
}

type scramDeleteRecord struct {
	User      string `json:"user"`
	Mechanism int8   `json:"mechanism"`
}

func (*scramDeleteRecord) kind() string { return typeScramDelete }

func (r *scramDeleteRecord) apply(b *builder, _ uint64) error {
	if _, ok := b.im.Scram[r.User][r.Mechanism]; !ok {
		return fmt.Errorf("controller: SCRAM credential %d for %q: %w", r.Mechanism, r.User, ErrNoCredential)
	}
	next := maps.Clone(b.im.Scram)
	user := maps.Clone(next[r.User])
	delete(user, r.Mechanism)
	if len(user) == 0 {
		delete(next, r.User)
	} else {
		next[r.User] = user
	}
	b.im.Scram = next
	return nil
}

type clientQuotaRecord struct {
	ClientQuota
}

func (*clientQuotaRecord) kind() string { return typeSetClientQuota }

func (r *clientQuotaRecord) apply(b *builder, _ uint64) error {
	e, err := r.Entity.Normalize()
	if err != nil {
		return err
	}
	next := maps.Clone(b.im.Quotas)
	if next == nil {
		next = map[string]ClientQuota{}
	}
	if len(r.Values) == 0 {
		delete(next, e.Key())
	} else {
		next[e.Key()] = ClientQuota{Entity: e, Values: r.Values}
	}
	b.im.Quotas = next
	return nil
}

// ScramCredentialFor returns a user's credential for a mechanism.
func (im *Image) ScramCredentialFor(user string, mech int8) (ScramCredential, bool) {
	c, ok := im.Scram[user][mech]
	return c, ok
}

// CreateACLs stores each binding; an existing binding is not an error.
// errs[i] answers acls[i].
func (c *Controller) CreateACLs(ctx context.Context, acls []ACLBinding) []error {
	errs := make([]error, len(acls))
	if err := c.checkWritable(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	records := make([]record, len(acls))
	for i, a := range acls {
		records[i] = &createACLsRecord{ACLs: []ACLBinding{a}}
	}
	return c.proposeAll(ctx, records)
}

// DeleteACLs removes, for each filter, the stored bindings it matches, and
// returns them; a binding matched by several filters is reported for each.
func (c *Controller) DeleteACLs(ctx context.Context, filters []func(ACLBinding) bool) ([][]ACLBinding, error) {
	if err := c.checkWritable(ctx); err != nil {
		return nil, err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	im := c.Image()
	out := make([][]ACLBinding, len(filters))
	var all []ACLBinding
	for i, f := range filters {
		for _, a := range im.ACLs {
			if f(a) {
				out[i] = append(out[i], a)
				all = append(all, a)
			}
		}
	}
	if len(all) == 0 {
		return out, nil
	}
	if err := c.propose(ctx, &deleteACLsRecord{ACLs: all}); err != nil {
		return nil, err
	}
	return out, nil
}

// ScramKey names one of a user's credentials.
type ScramKey struct {
	User      string
	Mechanism int8
}

// AlterScramCredentials applies deletions then upserts; the errors answer
// them in order.
func (c *Controller) AlterScramCredentials(ctx context.Context, deletions []ScramKey, upserts []ScramCredential) (delErrs, upErrs []error) {
	delErrs, upErrs = make([]error, len(deletions)), make([]error, len(upserts))
	if err := c.checkWritable(ctx); err != nil {
		for i := range delErrs {
			delErrs[i] = err
		}
		for i := range upErrs {
			upErrs[i] = err
		}
		return
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	var records []record
	for _, d := range deletions {
		records = append(records, &scramDeleteRecord{User: d.User, Mechanism: d.Mechanism})
	}
	for _, u := range upserts {
		records = append(records, &scramSetRecord{ScramCredential: u})
	}
	errs := c.proposeAll(ctx, records)
	copy(delErrs, errs[:len(deletions)])
	copy(upErrs, errs[len(deletions):])
	return
}

// SetClientQuota replaces an entity's quota values; empty values remove
// the entity's quotas.
func (c *Controller) SetClientQuotas(ctx context.Context, quotas []ClientQuota) []error {
	errs := make([]error, len(quotas))
	if err := c.checkWritable(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	records := make([]record, len(quotas))
	for i, q := range quotas {
		records[i] = &clientQuotaRecord{ClientQuota: q}
	}
	return c.proposeAll(ctx, records)
}

// securitySnapshot is the security part of a snapshot.
type securitySnapshot struct {
	ACLs   []ACLBinding      `json:"acls,omitempty"`
	Scram  []ScramCredential `json:"scram,omitempty"`
	Quotas []ClientQuota     `json:"quotas,omitempty"`
}

func snapshotSecurity(im *Image) securitySnapshot {
	s := securitySnapshot{ACLs: im.ACLs}
	for _, byMech := range im.Scram {
		for _, c := range byMech {
			s.Scram = append(s.Scram, c)
		}
	}
	sort.Slice(s.Scram, func(i, j int) bool {
		if s.Scram[i].User != s.Scram[j].User {
			return s.Scram[i].User < s.Scram[j].User
		}
		return s.Scram[i].Mechanism < s.Scram[j].Mechanism
	})
	for _, q := range im.Quotas {
		s.Quotas = append(s.Quotas, q)
	}
	sort.Slice(s.Quotas, func(i, j int) bool { return s.Quotas[i].Entity.Key() < s.Quotas[j].Entity.Key() })
	return s
}

// restoreSecurity replays a snapshot's security part through the records'
// own checks.
func restoreSecurity(im *Image, s securitySnapshot) error {
	b := &builder{im: im}
	if err := (&createACLsRecord{ACLs: s.ACLs}).apply(b, 0); err != nil {
		return err
	}
	if len(im.ACLs) != len(s.ACLs) {
		return fmt.Errorf("controller: snapshot: %w: duplicate ACLs", ErrCorrupt)
	}
	for _, c := range s.Scram {
		if err := (&scramSetRecord{ScramCredential: c}).apply(b, 0); err != nil {
			return err
		}
	}
	for _, q := range s.Quotas {
		if len(q.Values) == 0 {
			return fmt.Errorf("controller: snapshot: %w: empty quota for %q", ErrCorrupt, q.Entity.Key())
		}
		if err := (&clientQuotaRecord{ClientQuota: q}).apply(b, 0); err != nil {
			return err
		}
	}
	return nil
}
