package auth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"fmt"
	"runtime"
	"time"
	"unicode/utf8"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// PlainMessage is a parsed SASL PLAIN message (RFC 4616).
type PlainMessage struct {
	AuthzID  string
	Username string
	Password string
}

// ParsePlain parses "[authzid] NUL authcid NUL passwd". Kafka accepts an
// authorization id only when it equals the user name.
func ParsePlain(msg []byte) (PlainMessage, error) {
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 {
		return PlainMessage{}, fmt.Errorf("%w: PLAIN: want 3 NUL-separated fields, got %d", ErrMalformed, len(parts))
	}
	for _, p := range parts {
		if !utf8.Valid(p) {
			return PlainMessage{}, fmt.Errorf("%w: PLAIN: not UTF-8", ErrMalformed)
		}
	}
	m := PlainMessage{AuthzID: string(parts[0]), Username: string(parts[1]), Password: string(parts[2])}
	if m.Username == "" {
		return PlainMessage{}, fmt.Errorf("%w: PLAIN: empty user name", ErrMalformed)
	}
	if m.Password == "" {
		return PlainMessage{}, fmt.Errorf("%w: PLAIN: empty password", ErrMalformed)
	}
	if m.AuthzID != "" && m.AuthzID != m.Username {
		return PlainMessage{}, fmt.Errorf("%w: PLAIN: authorization id %q is not the user name", ErrAuthenticationFailed, m.AuthzID)
	}
	return m, nil
}

// Plain is the built-in PLAIN mechanism. Passwords are checked against the
// users' salted SCRAM credentials, so no password is ever stored in clear.
type Plain struct {
	Store CredentialStore
}

// Name implements Mechanism.
func (*Plain) Name() string { return "PLAIN" }

// Start implements Mechanism.
func (p *Plain) Start(ConnFacts) Exchange { return &plainExchange{store: p.Store} }

type plainExchange struct {
	store CredentialStore
	out   Outcome
}

func (e *plainExchange) Step(_ context.Context, msg []byte) ([]byte, bool, error) {
	m, err := ParsePlain(msg)
	if err != nil {
		return nil, false, err
	}
	if !VerifyPassword(e.store, m.Username, m.Password) {
		return nil, false, fmt.Errorf("auth: PLAIN user %q: %w", m.Username, ErrAuthenticationFailed)
	}
	e.out = Outcome{Principal: sdkauth.User(m.Username)}
	return nil, true, nil
}

func (e *plainExchange) Outcome() Outcome { return e.out }

// hashSlots bounds the password checks that salt a password: at most a
// quarter of the CPUs' time (at least half of one CPU) goes to them. Each
// check is thousands of HMAC rounds (a SCRAM credential's iterations), so
// unbounded, a PLAIN or HTTP basic brute force on a few connections takes
// every core from the clients already connected. A check takes one of
// half the CPUs' slots (at least one) and holds it for as long again after
// it is done; a guess waits for a slot on its own connection.
var hashSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

// VerifyPassword reports whether password matches one of user's SCRAM
// credentials (the strongest is tried first).
func VerifyPassword(store CredentialStore, user, password string) bool {
	if store == nil {
		return false
	}
	hashSlots <- struct{}{}
	start := time.Now()
	defer func() { time.AfterFunc(time.Since(start), func() { <-hashSlots }) }()
	for _, mech := range []ScramMechanism{ScramSHA512, ScramSHA256} {
		cred, ok := store.ScramCredential(user, mech)
		if !ok {
			continue
		}
		salted, err := SaltedPassword(mech, password, cred.Salt, cred.Iterations)
		if err != nil {
			return false
		}
		stored := mech.hash(mech.hmac(salted, []byte("Client Key")))
		return hmac.Equal(stored, cred.StoredKey)
	}
	return false
}
