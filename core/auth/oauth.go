package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// OAuthBearerMessage is a parsed OAUTHBEARER client message (RFC 7628).
type OAuthBearerMessage struct {
	AuthzID    string
	Token      string
	Extensions map[string]string
}

// maxTokenBytes bounds a bearer token; the pre-auth frame cap bounds it
// already, this keeps JSON decoding of claims small.
const maxTokenBytes = 64 << 10

// ParseOAuthBearerMessage parses "n,[a=authzid],\x01auth=Bearer <token>\x01[k=v\x01]*\x01".
func ParseOAuthBearerMessage(msg []byte) (OAuthBearerMessage, error) {
	bad := func(format string, args ...any) (OAuthBearerMessage, error) {
		return OAuthBearerMessage{}, fmt.Errorf("%w: OAUTHBEARER: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	s := string(msg)
	gs2, rest, ok := strings.Cut(s, "\x01")
	if !ok || len(gs2) < 3 || !strings.HasPrefix(gs2, "n,") && !strings.HasPrefix(gs2, "y,") || !strings.HasSuffix(gs2, ",") {
		return bad("no GS2 header")
	}
	var m OAuthBearerMessage
	if authz := gs2[2 : len(gs2)-1]; authz != "" {
		if !strings.HasPrefix(authz, "a=") {
			return bad("authzid %q", authz)
		}
		name, err := decodeSaslName(authz[2:])
		if err != nil {
			return bad("%v", err)
		}
		m.AuthzID = name
	}
	if !strings.HasSuffix(rest, "\x01\x01") && rest != "\x01" {
		return bad("message does not end with two separators")
	}
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "\x01\x01"), "\x01") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return bad("key-value %q", kv)
		}
		if k == "auth" {
			scheme, tok, ok := strings.Cut(v, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
				return bad("auth is not a bearer token")
			}
			m.Token = tok
			continue
		}
		if m.Extensions == nil {
			m.Extensions = map[string]string{}
		}
		m.Extensions[k] = v
	}
	if m.Token == "" {
		return bad("no auth")
	}
	if len(m.Token) > maxTokenBytes {
		return bad("token of %d bytes", len(m.Token))
	}
	return m, nil
}

// OAuthBearer is the built-in OAUTHBEARER mechanism: it validates signed
// JWTs against configured public keys, or, only when AllowUnsecured is set
// (tests), Kafka's unsecured "alg":"none" tokens.
type OAuthBearer struct {
	// Keys verify signatures, by key id ("" matches a token without kid).
	Keys map[string]crypto.PublicKey
	// Issuer and Audience, when set, must match iss and aud.
	Issuer   string
	Audience string
	// SubClaim names the claim holding the principal name; "" is "sub".
	SubClaim string
	// AllowUnsecured accepts alg "none" tokens. Never in production.
	AllowUnsecured bool
	// ClockSkew tolerates clocks that disagree; Now is the clock.
	ClockSkew time.Duration
	Now       func() time.Time
}

// Name implements Mechanism.
func (*OAuthBearer) Name() string { return "OAUTHBEARER" }

// Start implements Mechanism.
func (o *OAuthBearer) Start(ConnFacts) Exchange { return &oauthExchange{o: o} }

type oauthExchange struct {
	o   *OAuthBearer
	out Outcome
}

func (e *oauthExchange) Step(_ context.Context, msg []byte) ([]byte, bool, error) {
	m, err := ParseOAuthBearerMessage(msg)
	if err != nil {
		return nil, false, err
	}
	sub, exp, err := e.o.Validate(m.Token)
	if err != nil {
		return nil, false, err
	}
	if m.AuthzID != "" && m.AuthzID != sub {
		return nil, false, fmt.Errorf("auth: OAUTHBEARER: %w: authorization id %q is not the subject", ErrAuthenticationFailed, m.AuthzID)
	}
	e.out = Outcome{Principal: sdkauth.User(sub), Expiry: exp}
	return nil, true, nil
}

func (e *oauthExchange) Outcome() Outcome { return e.out }

type jwtHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// Validate checks a JWT's signature and claims and returns its subject and
// expiry.
func (o *OAuthBearer) Validate(token string) (string, time.Time, error) {
	fail := func(format string, args ...any) (string, time.Time, error) {
		return "", time.Time{}, fmt.Errorf("auth: OAUTHBEARER: %w: %s", ErrAuthenticationFailed, fmt.Sprintf(format, args...))
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return fail("token is not a JWS")
	}
	var hdr jwtHeader
	if err := decodeJWTPart(parts[0], &hdr); err != nil {
		return fail("header: %v", err)
	}
	var claims map[string]any
	if err := decodeJWTPart(parts[1], &claims); err != nil {
		return fail("claims: %v", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fail("signature is not base64url")
	}
	if hdr.Alg == "none" {
		if !o.AllowUnsecured || len(sig) != 0 {
			return fail("unsecured tokens are not accepted")
		}
	} else {
		key, ok := o.Keys[hdr.Kid]
		if !ok {
			return fail("no key %q", hdr.Kid)
		}
		if err := verifyJWS(hdr.Alg, key, []byte(parts[0]+"."+parts[1]), sig); err != nil {
			return fail("%v", err)
		}
	}
	now := time.Now()
	if o.Now != nil {
		now = o.Now()
	}
	expF, ok := claims["exp"].(float64)
	if !ok {
		return fail("no exp claim")
	}
	exp := time.Unix(int64(expF), 0)
	if !now.Before(exp.Add(o.ClockSkew)) {
		return fail("token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if nbf, ok := claims["nbf"].(float64); ok && now.Add(o.ClockSkew).Before(time.Unix(int64(nbf), 0)) {
		return fail("token not valid yet")
	}
	if o.Issuer != "" && claims["iss"] != o.Issuer {
		return fail("issuer %v", claims["iss"])
	}
	if o.Audience != "" && !hasAudience(claims["aud"], o.Audience) {
		return fail("audience %v", claims["aud"])
	}
	subClaim := o.SubClaim
	if subClaim == "" {
		subClaim = "sub"
	}
	sub, _ := claims[subClaim].(string)
	if sub == "" {
		return fail("no %s claim", subClaim)
	}
	return sub, exp, nil
}

func hasAudience(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return a == want
	case []any:
		for _, x := range a {
			if x == want {
				return true
			}
		}
	}
	return false
}

func decodeJWTPart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("not base64url")
	}
	return json.Unmarshal(b, v)
}

func verifyJWS(alg string, key crypto.PublicKey, signed, sig []byte) error {
	digest := func(h crypto.Hash) []byte {
		if h == crypto.SHA512 {
			d := sha512.Sum512(signed)
			return d[:]
		}
		if h == crypto.SHA384 {
			d := sha512.Sum384(signed)
			return d[:]
		}
		d := sha256.Sum256(signed)
		return d[:]
	}
	if alg == "EdDSA" {
		k, ok := key.(ed25519.PublicKey)
		if !ok {
			return fmt.Errorf("algorithm %q does not fit the key", alg)
		}
		if !ed25519.Verify(k, signed, sig) {
			return fmt.Errorf("bad signature")
		}
		return nil
	}
	hashes := map[string]crypto.Hash{"256": crypto.SHA256, "384": crypto.SHA384, "512": crypto.SHA512}
	if len(alg) != 5 {
		return fmt.Errorf("algorithm %q is not supported", alg)
	}
	h, ok := hashes[alg[2:]]
	if !ok {
		return fmt.Errorf("algorithm %q is not supported", alg)
	}
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch alg[:2] {
		case "RS":
			return rsa.VerifyPKCS1v15(k, h, digest(h), sig)
		case "PS":
			return rsa.VerifyPSS(k, h, digest(h), sig, nil)
		}
	case *ecdsa.PublicKey:
		if alg[:2] == "ES" {
			n := (k.Curve.Params().BitSize + 7) / 8
			if len(sig) != 2*n {
				return fmt.Errorf("ECDSA signature of %d bytes", len(sig))
			}
			r, s := new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
			if !ecdsa.Verify(k, digest(h), r, s) {
				return fmt.Errorf("bad signature")
			}
			return nil
		}
	}
	return fmt.Errorf("algorithm %q does not fit the key", alg)
}
