package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

func jwt(t *testing.T, alg, kid string, claims map[string]any, key *ecdsa.PrivateKey) string {
	t.Helper()
	h, _ := json.Marshal(map[string]string{"alg": alg, "kid": kid, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	signed := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	if key == nil {
		return signed + "."
	}
	d := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, key, d[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func TestOAuthBearer(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	claims := func(sub string, exp time.Time) map[string]any {
		return map[string]any{"sub": sub, "exp": exp.Unix(), "iss": "gregor-test", "aud": []string{"kafka"}}
	}
	signed := &OAuthBearer{Keys: map[string]crypto.PublicKey{"k1": &key.PublicKey}, Issuer: "gregor-test", Audience: "kafka",
		Now: func() time.Time { return now }}
	unsecured := &OAuthBearer{AllowUnsecured: true, Now: func() time.Time { return now }}
	for _, tc := range []struct {
		name  string
		mech  *OAuthBearer
		token string
		want  string
	}{
		{"signed ok", signed, jwt(t, "ES256", "k1", claims("alice", now.Add(time.Hour)), key), "User:alice"},
		{"signed by another key", signed, jwt(t, "ES256", "k1", claims("alice", now.Add(time.Hour)), other), ""},
		{"unknown kid", signed, jwt(t, "ES256", "k2", claims("alice", now.Add(time.Hour)), key), ""},
		{"expired", signed, jwt(t, "ES256", "k1", claims("alice", now.Add(-time.Second)), key), ""},
		{"wrong issuer", signed, jwt(t, "ES256", "k1", map[string]any{"sub": "a", "exp": now.Add(time.Hour).Unix(), "iss": "x", "aud": "kafka"}, key), ""},
		{"wrong audience", signed, jwt(t, "ES256", "k1", map[string]any{"sub": "a", "exp": now.Add(time.Hour).Unix(), "iss": "gregor-test", "aud": "web"}, key), ""},
		{"unsecured refused by default", signed, jwt(t, "none", "", claims("alice", now.Add(time.Hour)), nil), ""},
		{"unsecured when enabled", unsecured, jwt(t, "none", "", claims("bob", now.Add(time.Hour)), nil), "User:bob"},
		{"no subject", unsecured, jwt(t, "none", "", map[string]any{"exp": now.Add(time.Hour).Unix()}, nil), ""},
		{"no exp", unsecured, jwt(t, "none", "", map[string]any{"sub": "x"}, nil), ""},
		{"not a jwt", unsecured, "abc", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := oauth.Auth{Token: tc.token}.AsMechanism()
			out, err := runExchange(context.Background(), client, tc.mech.Start(ConnFacts{}))
			if tc.want == "" {
				if !errors.Is(err, ErrAuthenticationFailed) {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Principal.String() != tc.want || !out.Expiry.Equal(now.Add(time.Hour)) {
				t.Fatalf("outcome %+v", out)
			}
		})
	}
}

func TestParseOAuthBearerMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  string
		ok   bool
	}{
		{"ok", "n,,\x01auth=Bearer tok\x01\x01", true},
		{"extensions", "n,a=bob,\x01auth=Bearer tok\x01ext=1\x01\x01", true},
		{"no auth", "n,,\x01x=y\x01\x01", false},
		{"not bearer", "n,,\x01auth=Basic tok\x01\x01", false},
		{"no terminator", "n,,\x01auth=Bearer tok", false},
		{"no header", "\x01auth=Bearer tok\x01\x01", false},
		{"client error reply", "\x01", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOAuthBearerMessage([]byte(tc.msg))
			if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v", err)
			}
		})
	}
}
