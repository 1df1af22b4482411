// Package auth is the authentication and authorization contract. An
// Authenticator turns SASL credentials into a principal; an Authorizer
// decides whether a principal may perform operations on resources. The
// enums carry Kafka's own codes (as in DescribeAcls and CreateAcls), so a
// value crosses the wire, the WASM ABI and gRPC unchanged.
package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Principal is an authenticated identity, written "Type:Name" as in Kafka
// ("User:alice"). The zero value is the anonymous principal's absence; use
// Anonymous for unauthenticated connections.
type Principal struct {
	Type string
	Name string
}

// Anonymous is the principal of a connection that did not authenticate.
var Anonymous = Principal{Type: "User", Name: "ANONYMOUS"}

// User returns the principal User:name.
func User(name string) Principal { return Principal{Type: "User", Name: name} }

// String returns "Type:Name".
func (p Principal) String() string { return p.Type + ":" + p.Name }

// ParsePrincipal parses "Type:Name". The name may itself hold colons.
func ParsePrincipal(s string) (Principal, error) {
	typ, name, ok := strings.Cut(s, ":")
	if !ok || typ == "" || name == "" {
		return Principal{}, fmt.Errorf("auth: principal %q: want Type:Name", s)
	}
	return Principal{Type: typ, Name: name}, nil
}

// Credentials is what a client presented during SASL authentication.
type Credentials struct {
	// Mechanism is the SASL mechanism name, upper case ("PLAIN",
	// "SCRAM-SHA-256", "OAUTHBEARER").
	Mechanism string
	// Username and Password are filled for PLAIN (the authorization
	// identity of PLAIN, when present, is in AuthorizationID).
	Username        string
	Password        []byte
	AuthorizationID string
	// Token is the bearer token for OAUTHBEARER, or the raw client message
	// for a mechanism the broker does not parse itself.
	Token []byte
	// Listener names the listener the connection came in on; ClientHost is
	// the client's IP address.
	Listener   string
	ClientHost string
}

// ErrAuthenticationFailed is returned (wrapped) by an Authenticator that
// rejects the credentials. The broker answers SASL_AUTHENTICATION_FAILED and
// never tells the client more than that.
var ErrAuthenticationFailed = errors.New("authentication failed")

// ErrUnsupportedMechanism is returned (wrapped) for a mechanism the
// authenticator does not handle.
var ErrUnsupportedMechanism = errors.New("unsupported SASL mechanism")

// Authenticator turns credentials into a principal. Mechanisms lists the
// SASL mechanisms it accepts, upper case.
type Authenticator interface {
	Mechanisms() []string
	Authenticate(ctx context.Context, c Credentials) (Principal, error)
}

// Operation is a Kafka ACL operation (AclOperation codes).
type Operation int8

// Kafka's ACL operations.
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

var opNames = [...]string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER",
	"DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
	"CREATE_TOKENS", "DESCRIBE_TOKENS"}

// String returns Kafka's name of the operation ("WRITE").
func (o Operation) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Operation(%d)", int8(o))
}

// ParseOperation parses Kafka's name of an operation, any case.
func ParseOperation(s string) (Operation, error) {
	for i, n := range opNames {
		if strings.EqualFold(n, s) {
			return Operation(i), nil
		}
	}
	return OpUnknown, fmt.Errorf("auth: unknown operation %q", s)
}

// ResourceType is a Kafka ACL resource type.
type ResourceType int8

// Kafka's resource types.
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

var resNames = [...]string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID",
	"DELEGATION_TOKEN", "USER"}

// String returns Kafka's name of the resource type ("TOPIC").
func (r ResourceType) String() string {
	if r >= 0 && int(r) < len(resNames) {
		return resNames[r]
	}
	return fmt.Sprintf("ResourceType(%d)", int8(r))
}

// ParseResourceType parses Kafka's name of a resource type, any case.
func ParseResourceType(s string) (ResourceType, error) {
	for i, n := range resNames {
		if strings.EqualFold(n, s) {
			return ResourceType(i), nil
		}
	}
	return ResourceUnknown, fmt.Errorf("auth: unknown resource type %q", s)
}

// PatternType is a Kafka ACL resource pattern type.
type PatternType int8

// Kafka's pattern types. An authorization request names a concrete
// resource, so its pattern is PatternLiteral; the others appear in ACLs.
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

var patNames = [...]string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}

// String returns Kafka's name of the pattern type ("LITERAL").
func (p PatternType) String() string {
	if p >= 0 && int(p) < len(patNames) {
		return patNames[p]
	}
	return fmt.Sprintf("PatternType(%d)", int8(p))
}

// Resource names what an operation acts on. The cluster resource is named
// "kafka-cluster", as in Kafka.
type Resource struct {
	Type    ResourceType
	Name    string
	Pattern PatternType
}

// ClusterName is the name of the cluster resource.
const ClusterName = "kafka-cluster"

// Action is one authorization question: may Principal, connected from
// Host, perform Operation on Resource?
type Action struct {
	Principal Principal
	Host      string
	Operation Operation
	Resource  Resource
}

// Decision is an Authorizer's answer. The zero value denies.
type Decision int8

// Decisions.
const (
	Deny  Decision = 0
	Allow Decision = 1
)

// String returns "DENY" or "ALLOW".
func (d Decision) String() string {
	switch d {
	case Deny:
		return "DENY"
	case Allow:
		return "ALLOW"
	}
	return fmt.Sprintf("Decision(%d)", int8(d))
}

// Authorizer decides a batch of actions at once, as Kafka's authorizer
// does: decisions[i] answers actions[i]. A request that touches many
// resources (Metadata for a hundred topics) costs one call. On error the
// broker applies the configured fallback and decisions is ignored.
type Authorizer interface {
	Authorize(ctx context.Context, actions []Action, decisions []Decision) error
}

// Func adapts a per-action function to the Authorizer interface.
type Func func(ctx context.Context, a Action) (Decision, error)

// Authorize calls f for each action.
func (f Func) Authorize(ctx context.Context, actions []Action, decisions []Decision) error {
	if err := CheckBatch(actions, decisions); err != nil {
		return err
	}
	for i, a := range actions {
		d, err := f(ctx, a)
		if err != nil {
			return fmt.Errorf("auth: action %d (%s %s %s:%s): %w", i, a.Principal, a.Operation, a.Resource.Type, a.Resource.Name, err)
		}
		decisions[i] = d
	}
	return nil
}

// CheckBatch validates the arguments of an Authorize call.
func CheckBatch(actions []Action, decisions []Decision) error {
	if len(decisions) < len(actions) {
		return fmt.Errorf("auth: %d decisions for %d actions", len(decisions), len(actions))
	}
	return nil
}

// AllowAll allows every action.
type AllowAll struct{}

// Authorize implements Authorizer.
func (AllowAll) Authorize(_ context.Context, actions []Action, decisions []Decision) error {
	if err := CheckBatch(actions, decisions); err != nil {
		return err
	}
	for i := range actions {
		decisions[i] = Allow
	}
	return nil
}
