package auth

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// Mechanism is one SASL mechanism the broker offers.
type Mechanism interface {
	// Name is the mechanism's SASL name, upper case ("SCRAM-SHA-256").
	Name() string
	// Start begins an exchange for one connection.
	Start(c ConnFacts) Exchange
}

// ConnFacts are what a mechanism may know about the connection.
type ConnFacts struct {
	Listener   string
	ClientHost string
}

// Exchange is one connection's SASL exchange. It is used by one goroutine.
type Exchange interface {
	// Step consumes a client message and returns the server's reply.
	// done reports success; an error ends the exchange (wrapping
	// ErrAuthenticationFailed or ErrMalformed).
	Step(ctx context.Context, msg []byte) (reply []byte, done bool, err error)
	// Outcome is the authenticated identity once Step reported done.
	Outcome() Outcome
}

// Outcome is an authenticated identity.
type Outcome struct {
	Principal sdkauth.Principal
	// Expiry is when the credential stops being valid (an OAUTHBEARER
	// token's exp); zero means only the configured session lifetime applies.
	Expiry time.Time
}

// Mechanisms is the set of enabled mechanisms. It is read-only once built.
type Mechanisms struct {
	byName map[string]Mechanism
}

// NewMechanisms builds the set; two mechanisms with one name is an error.
func NewMechanisms(ms ...Mechanism) (*Mechanisms, error) {
	s := &Mechanisms{byName: map[string]Mechanism{}}
	for _, m := range ms {
		n := strings.ToUpper(m.Name())
		if _, dup := s.byName[n]; dup {
			return nil, fmt.Errorf("auth: SASL mechanism %s is configured twice", n)
		}
		s.byName[n] = m
	}
	return s, nil
}

// Names lists the enabled mechanisms, sorted, as SaslHandshake reports them.
func (s *Mechanisms) Names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup finds a mechanism by its name (exact, as Kafka matches it).
func (s *Mechanisms) Lookup(name string) (Mechanism, bool) {
	if s == nil {
		return nil, false
	}
	m, ok := s.byName[name]
	return m, ok
}

// FromAuthenticator adapts an extension Authenticator: each mechanism it
// lists becomes a single-message mechanism. PLAIN messages are parsed into
// username and password and OAUTHBEARER messages into their token; any other
// mechanism's message is passed whole as the token.
func FromAuthenticator(a sdkauth.Authenticator) []Mechanism {
	var out []Mechanism
	for _, n := range a.Mechanisms() {
		out = append(out, &extMechanism{name: strings.ToUpper(n), a: a})
	}
	return out
}

type extMechanism struct {
	name string
	a    sdkauth.Authenticator
}

func (m *extMechanism) Name() string { return m.name }

func (m *extMechanism) Start(c ConnFacts) Exchange { return &extExchange{m: m, facts: c} }

type extExchange struct {
	m     *extMechanism
	facts ConnFacts
	out   Outcome
}

func (e *extExchange) Step(ctx context.Context, msg []byte) ([]byte, bool, error) {
	cred := sdkauth.Credentials{Mechanism: e.m.name, Listener: e.facts.Listener, ClientHost: e.facts.ClientHost}
	switch e.m.name {
	case "PLAIN":
		p, err := ParsePlain(msg)
		if err != nil {
			return nil, false, err
		}
		cred.Username, cred.Password, cred.AuthorizationID = p.Username, []byte(p.Password), p.AuthzID
	case "OAUTHBEARER":
		tok, err := ParseOAuthBearerMessage(msg)
		if err != nil {
			return nil, false, err
		}
		cred.Token = []byte(tok.Token)
	default:
		cred.Token = msg
	}
	p, err := e.m.a.Authenticate(ctx, cred)
	if err != nil {
		return nil, false, fmt.Errorf("auth: %s by extension: %w", e.m.name, err)
	}
	if p.Type == "" || p.Name == "" {
		return nil, false, fmt.Errorf("auth: %s by extension: %w: empty principal", e.m.name, ErrAuthenticationFailed)
	}
	e.out = Outcome{Principal: p}
	return nil, true, nil
}

func (e *extExchange) Outcome() Outcome { return e.out }
