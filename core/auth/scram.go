package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ScramClientFirst is a parsed client-first-message (RFC 5802 §7).
type ScramClientFirst struct {
	GS2Header string // "n,," or "y,,", with any authzid
	AuthzID   string
	Username  string
	Nonce     string
	// Bare is the client-first-message-bare, part of the AuthMessage.
	Bare string
	// Extensions are the optional attributes after the nonce (KIP-84).
	Extensions map[string]string
}

// ParseScramClientFirst parses a client-first-message. Channel binding is
// not supported (Kafka does not support it either).
func ParseScramClientFirst(msg []byte) (ScramClientFirst, error) {
	s := string(msg)
	bad := func(format string, args ...any) (ScramClientFirst, error) {
		return ScramClientFirst{}, fmt.Errorf("%w: SCRAM client-first: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	var f ScramClientFirst
	cb, rest, ok := strings.Cut(s, ",")
	if !ok {
		return bad("no GS2 header")
	}
	if cb != "n" && cb != "y" {
		return bad("channel binding %q is not supported", cb)
	}
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return bad("no GS2 header")
	}
	if authz != "" {
		if !strings.HasPrefix(authz, "a=") {
			return bad("authzid %q", authz)
		}
		name, err := decodeSaslName(authz[2:])
		if err != nil {
			return bad("%v", err)
		}
		f.AuthzID = name
	}
	f.GS2Header = cb + "," + authz + ","
	f.Bare = bare
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		if strings.HasPrefix(bare, "m=") {
			return bad("mandatory extension is not supported")
		}
		return bad("want n=user,r=nonce")
	}
	name, err := decodeSaslName(attrs[0][2:])
	if err != nil {
		return bad("%v", err)
	}
	if name == "" {
		return bad("empty user name")
	}
	f.Username = name
	f.Nonce = attrs[1][2:]
	if err := checkNonce(f.Nonce); err != nil {
		return bad("%v", err)
	}
	for _, a := range attrs[2:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return bad("extension %q", a)
		}
		if f.Extensions == nil {
			f.Extensions = map[string]string{}
		}
		f.Extensions[k] = v
	}
	if f.AuthzID != "" && f.AuthzID != f.Username {
		return ScramClientFirst{}, fmt.Errorf("%w: SCRAM authorization id %q is not the user name", ErrAuthenticationFailed, f.AuthzID)
	}
	return f, nil
}

// ScramClientFinal is a parsed client-final-message.
type ScramClientFinal struct {
	ChannelBinding []byte
	Nonce          string
	Proof          []byte
	// WithoutProof is the message up to ",p=", part of the AuthMessage.
	WithoutProof string
}

// ParseScramClientFinal parses "c=...,r=...[,ext...],p=...".
func ParseScramClientFinal(msg []byte) (ScramClientFinal, error) {
	s := string(msg)
	bad := func(format string, args ...any) (ScramClientFinal, error) {
		return ScramClientFinal{}, fmt.Errorf("%w: SCRAM client-final: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	i := strings.LastIndex(s, ",p=")
	if i < 0 {
		return bad("no proof")
	}
	var f ScramClientFinal
	f.WithoutProof = s[:i]
	proof, err := base64.StdEncoding.DecodeString(s[i+3:])
	if err != nil || len(proof) == 0 {
		return bad("proof is not base64")
	}
	f.Proof = proof
	attrs := strings.Split(f.WithoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return bad("want c=binding,r=nonce")
	}
	if f.ChannelBinding, err = base64.StdEncoding.DecodeString(attrs[0][2:]); err != nil {
		return bad("channel binding is not base64")
	}
	f.Nonce = attrs[1][2:]
	if err := checkNonce(f.Nonce); err != nil {
		return bad("%v", err)
	}
	return f, nil
}

func checkNonce(n string) error {
	if n == "" {
		return fmt.Errorf("empty nonce")
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c < 0x21 || c > 0x7e || c == ',' {
			return fmt.Errorf("nonce has byte 0x%02x", c)
		}
	}
	return nil
}

// decodeSaslName undoes RFC 5802's escaping of ',' and '='.
func decodeSaslName(s string) (string, error) {
	if !strings.Contains(s, "=") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", fmt.Errorf("bad escape in name %q", s)
		}
		i += 2
	}
	return b.String(), nil
}

// Scram is the built-in SCRAM-SHA-256 or SCRAM-SHA-512 mechanism.
type Scram struct {
	Mech  ScramMechanism
	Store CredentialStore
	// FakeSalt derives the salt shown for unknown users, so that the
	// exchange does not reveal which users exist; it must be a secret.
	FakeSalt []byte
}

// Name implements Mechanism.
func (s *Scram) Name() string { return s.Mech.String() }

// Start implements Mechanism.
func (s *Scram) Start(ConnFacts) Exchange { return &scramExchange{s: s} }

type scramExchange struct {
	s           *Scram
	step        int
	first       ScramClientFirst
	serverFirst string
	nonce       string
	cred        ScramCredential
	unknown     bool
	out         Outcome
}

func (e *scramExchange) Step(_ context.Context, msg []byte) ([]byte, bool, error) {
	mech := e.s.Mech
	switch e.step {
	case 0:
		f, err := ParseScramClientFirst(msg)
		if err != nil {
			return nil, false, err
		}
		if f.Extensions["tokenauth"] == "true" {
			return nil, false, fmt.Errorf("auth: %s: %w: delegation tokens are not supported", mech, ErrAuthenticationFailed)
		}
		e.first = f
		cred, ok := ScramCredential{}, false
		if e.s.Store != nil {
			cred, ok = e.s.Store.ScramCredential(f.Username, mech)
		}
		if !ok {
			// Carry on with a fake credential; the proof check fails.
			e.unknown = true
			cred = ScramCredential{Mechanism: mech, Salt: mech.hmac(e.s.FakeSalt, []byte(f.Username))[:16], Iterations: MinScramIterations}
		}
		e.cred = cred
		var rnd [24]byte
		rand.Read(rnd[:])
		e.nonce = f.Nonce + base64.RawURLEncoding.EncodeToString(rnd[:])
		e.serverFirst = "r=" + e.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) + ",i=" + strconv.Itoa(int(cred.Iterations))
		e.step = 1
		return []byte(e.serverFirst), false, nil
	case 1:
		e.step = 2
		f, err := ParseScramClientFinal(msg)
		if err != nil {
			return nil, false, err
		}
		if string(f.ChannelBinding) != e.first.GS2Header {
			return nil, false, fmt.Errorf("%w: SCRAM client-final: channel binding does not match the GS2 header", ErrMalformed)
		}
		if f.Nonce != e.nonce {
			return nil, false, fmt.Errorf("%w: SCRAM client-final: nonce does not match", ErrMalformed)
		}
		authMsg := []byte(e.first.Bare + "," + e.serverFirst + "," + f.WithoutProof)
		if e.unknown || len(f.Proof) != mech.size() {
			return nil, false, fmt.Errorf("auth: %s user %q: %w", mech, e.first.Username, ErrAuthenticationFailed)
		}
		sig := mech.hmac(e.cred.StoredKey, authMsg)
		clientKey := make([]byte, len(sig))
		for i := range sig {
			clientKey[i] = f.Proof[i] ^ sig[i]
		}
		if !hmac.Equal(mech.hash(clientKey), e.cred.StoredKey) {
			return nil, false, fmt.Errorf("auth: %s user %q: %w", mech, e.first.Username, ErrAuthenticationFailed)
		}
		e.out = Outcome{Principal: sdkauth.User(e.first.Username)}
		return []byte("v=" + base64.StdEncoding.EncodeToString(mech.hmac(e.cred.ServerKey, authMsg))), true, nil
	}
	return nil, false, fmt.Errorf("%w: SCRAM exchange already finished", ErrMalformed)
}

func (e *scramExchange) Outcome() Outcome { return e.out }
