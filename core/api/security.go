package api

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/httpapi"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// Security is what the handlers need to authenticate and authorize. The
// zero value offers no SASL mechanism and allows everything.
type Security struct {
	// Mechanisms are offered on SASL listeners.
	Mechanisms *auth.Mechanisms
	// Authorizer decides every action; nil allows everything (Kafka
	// without an authorizer). ACLs, when set, is the built-in one: it is
	// fed the image's ACLs and the ACL APIs manage it.
	Authorizer sdkauth.Authorizer
	ACLs       *auth.ACLAuthorizer
	// SessionLifetime bounds SASL sessions (KIP-368); 0 means none.
	SessionLifetime time.Duration
	// Quotas enforces client quotas, fed from the image; nil enforces
	// none (the quota APIs still store them).
	Quotas *auth.Quotas

	mu      sync.Mutex // guards aclFrom and quotas
	aclFrom *controller.Image
	quotas  quotaState
}

// ImageCredentials reads SCRAM credentials from the controller's current
// image; it is the broker's auth.CredentialStore.
type ImageCredentials struct{ Controller *controller.Controller }

// ScramCredential implements auth.CredentialStore.
func (s ImageCredentials) ScramCredential(user string, mech auth.ScramMechanism) (auth.ScramCredential, bool) {
	c, ok := s.Controller.Image().ScramCredentialFor(user, int8(mech))
	if !ok {
		return auth.ScramCredential{}, false
	}
	return auth.ScramCredential{Mechanism: mech, Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations}, true
}

// ACLFromBinding converts a stored binding.
func ACLFromBinding(a controller.ACLBinding) auth.ACL {
	return auth.ACL{
		Resource:   sdkauth.Resource{Type: sdkauth.ResourceType(a.ResourceType), Name: a.ResourceName, Pattern: sdkauth.PatternType(a.PatternType)},
		Principal:  a.Principal,
		Host:       a.Host,
		Operation:  sdkauth.Operation(a.Operation),
		Permission: auth.Permission(a.Permission),
	}
}

// BindingFromACL converts an ACL for storage.
func BindingFromACL(a auth.ACL) controller.ACLBinding {
	return controller.ACLBinding{
		ResourceType: int8(a.Resource.Type), ResourceName: a.Resource.Name, PatternType: int8(a.Resource.Pattern),
		Principal: a.Principal, Host: a.Host, Operation: int8(a.Operation), Permission: int8(a.Permission),
	}
}

// syncACLs feeds the built-in authorizer the image's ACLs when they changed.
func (b *Broker) syncACLs() {
	s := &b.Security
	if s.ACLs == nil {
		return
	}
	im := b.Controller.Image()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aclFrom != nil && (s.aclFrom == im || sameACLs(s.aclFrom.ACLs, im.ACLs)) {
		s.aclFrom = im
		return
	}
	acls := make([]auth.ACL, len(im.ACLs))
	for i, a := range im.ACLs {
		acls[i] = ACLFromBinding(a)
	}
	s.ACLs.SetACLs(acls)
	s.aclFrom = im
}

// sameACLs reports whether two images share their ACL slice (the image
// replaces the slice on every ACL change).
func sameACLs(a, b []controller.ACLBinding) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// principalOf returns the connection's principal; a request without a
// connection (tests that call handlers directly) is anonymous.
func principalOf(r *protocol.Request) sdkauth.Principal {
	if r.Conn == nil {
		return sdkauth.Anonymous
	}
	p, err := sdkauth.ParsePrincipal(r.Conn.Principal())
	if err != nil {
		return sdkauth.Anonymous
	}
	return p
}

func hostOf(r *protocol.Request) string {
	if r.Conn == nil || r.Conn.Remote == nil {
		return ""
	}
	if ta, ok := r.Conn.Remote.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	h, _, err := net.SplitHostPort(r.Conn.Remote.String())
	if err != nil {
		return r.Conn.Remote.String()
	}
	return h
}

// authorizeAll decides one operation on several resources of a type.
func (b *Broker) authorizeAll(r *protocol.Request, op sdkauth.Operation, typ sdkauth.ResourceType, names []string) []bool {
	actions := make([]sdkauth.Action, len(names))
	for i, n := range names {
		actions[i] = sdkauth.Action{Operation: op, Resource: sdkauth.Resource{Type: typ, Name: n, Pattern: sdkauth.PatternLiteral}}
	}
	return b.decide(r, actions)
}

// decide asks the authorizer about actions taken by the request's principal
// from its host (both are filled in here); no authorizer allows everything,
// an authorizer error denies (and is logged).
func (b *Broker) decide(r *protocol.Request, actions []sdkauth.Action) []bool {
	out := make([]bool, len(actions))
	az := b.Security.Authorizer
	if az == nil {
		for i := range out {
			out[i] = true
		}
		return out
	}
	b.syncACLs()
	p, host := principalOf(r), hostOf(r)
	for i := range actions {
		actions[i].Principal, actions[i].Host = p, host
	}
	decisions := make([]sdkauth.Decision, len(actions))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := az.Authorize(ctx, actions, decisions); err != nil {
		b.Logger.Warn("authorizer failed; denying", "principal", p.String(), "err", err)
		return out
	}
	for i, d := range decisions {
		out[i] = d == sdkauth.Allow
	}
	return out
}

// byResourceType is an authorizer that can tell whether a principal may
// perform an operation on some resource of a type (KIP-679); the built-in
// ACL authorizer can.
type byResourceType interface {
	AllowedByResourceType(sdkauth.Action) bool
}

// authorizeByResourceType decides op on any resource of typ. An authorizer
// that cannot answer the question denies, which only makes the caller fall
// back to the narrower check.
func (b *Broker) authorizeByResourceType(r *protocol.Request, op sdkauth.Operation, typ sdkauth.ResourceType) bool {
	az := b.Security.Authorizer
	if az == nil {
		return true
	}
	rt, ok := az.(byResourceType)
	if !ok {
		return false
	}
	b.syncACLs()
	return rt.AllowedByResourceType(sdkauth.Action{Principal: principalOf(r), Host: hostOf(r), Operation: op,
		Resource: sdkauth.Resource{Type: typ, Pattern: sdkauth.PatternLiteral}})
}

// authorizedOps is the bit set (1<<operation) of the operations in all that
// the principal may perform on a resource, as DescribeCluster, Metadata and
// DescribeGroups report it (KIP-430).
func (b *Broker) authorizedOps(r *protocol.Request, typ sdkauth.ResourceType, name string, all int32) int32 {
	if b.Security.Authorizer == nil {
		return all
	}
	var actions []sdkauth.Action
	for bit := 0; bit < 31; bit++ {
		if all&(1<<bit) != 0 {
			actions = append(actions, sdkauth.Action{Operation: sdkauth.Operation(bit),
				Resource: sdkauth.Resource{Type: typ, Name: name, Pattern: sdkauth.PatternLiteral}})
		}
	}
	var ops int32
	for i, ok := range b.decide(r, actions) {
		if ok {
			ops |= 1 << int32(actions[i].Operation)
		}
	}
	return ops
}

// authorize decides one operation on one resource.
func (b *Broker) authorize(r *protocol.Request, op sdkauth.Operation, typ sdkauth.ResourceType, name string) bool {
	return b.authorizeAll(r, op, typ, []string{name})[0]
}

// authorizeCluster decides an operation on the cluster resource.
func (b *Broker) authorizeCluster(r *protocol.Request, op sdkauth.Operation) bool {
	return b.authorize(r, op, sdkauth.ResourceCluster, sdkauth.ClusterName)
}

// configResourceDenied decides op (DESCRIBE_CONFIGS or ALTER_CONFIGS) on a
// config resource as Kafka does: a topic is its own resource, a broker or
// broker logger is the cluster. It returns nil when allowed, and the error
// Kafka answers otherwise.
func (b *Broker) configResourceDenied(r *protocol.Request, op sdkauth.Operation, typ kmsg.ConfigResourceType, name string) *apiError {
	if b.Security.Authorizer == nil {
		return nil
	}
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if !b.authorize(r, op, sdkauth.ResourceTopic, name) {
			return newAPIError(kerr.TopicAuthorizationFailed, "Topic authorization failed.")
		}
	case kmsg.ConfigResourceTypeGroupConfig:
		if !b.authorize(r, op, sdkauth.ResourceGroup, name) {
			return newAPIError(kerr.GroupAuthorizationFailed, "Group authorization failed.")
		}
	default:
		if !b.authorizeCluster(r, op) {
			return newAPIError(kerr.ClusterAuthorizationFailed, "Cluster authorization failed.")
		}
	}
	return nil
}

// topicAuthorizer caches topic decisions within one request.
type topicAuthorizer struct {
	b    *Broker
	r    *protocol.Request
	op   sdkauth.Operation
	seen map[string]bool
}

func (b *Broker) topicAuth(r *protocol.Request, op sdkauth.Operation) *topicAuthorizer {
	return &topicAuthorizer{b: b, r: r, op: op, seen: map[string]bool{}}
}

func (t *topicAuthorizer) allowed(topic string) bool {
	if t.b.Security.Authorizer == nil {
		return true
	}
	if d, ok := t.seen[topic]; ok {
		return d
	}
	d := t.b.authorize(t.r, t.op, sdkauth.ResourceTopic, topic)
	t.seen[topic] = d
	return d
}

// endpoint is the address of br on the listener r came in on (Kafka
// answers each client with its own listener's addresses). A broker that
// registered endpoints but not this listener is skipped (ok false).
func endpoint(br controller.Broker, r *protocol.Request) (host string, port int32, ok bool) {
	if r.Conn == nil || len(br.Endpoints) == 0 {
		return br.Host, br.Port, true
	}
	for _, e := range br.Endpoints {
		if e.Listener == r.Conn.Listener {
			return e.Host, e.Port, true
		}
	}
	return "", 0, false
}

// The Kafka-facing half of produce over HTTP (httpapi.BrokerProducer does
// the rest): WRITE on the topic is authorized by the Kafka listeners'
// authorizer and append errors get Kafka Produce's error codes.

// AuthorizeHTTPWrite refuses a principal the authorizer does not let WRITE
// to topic, with an error wrapping httpapi.ErrNotAuthorized; with no
// authorizer every write is allowed.
func (b *Broker) AuthorizeHTTPWrite(ctx context.Context, principal sdkauth.Principal, topic string) error {
	a := b.Security.Authorizer
	if a == nil {
		return nil
	}
	b.syncACLs()
	act := []sdkauth.Action{{Principal: principal, Host: httpapi.ClientHost(ctx), Operation: sdkauth.OpWrite,
		Resource: sdkauth.Resource{Type: sdkauth.ResourceTopic, Name: topic, Pattern: sdkauth.PatternLiteral}}}
	dec := make([]sdkauth.Decision, 1)
	if err := a.Authorize(ctx, act, dec); err != nil || dec[0] != sdkauth.Allow {
		return fmt.Errorf("%w: %s may not write to %s", httpapi.ErrNotAuthorized, principal, topic)
	}
	return nil
}
