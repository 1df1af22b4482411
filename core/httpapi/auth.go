package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Credentials are what an HTTP client presented in its Authorization
// header: HTTP Basic (checked like SASL PLAIN) or a Bearer token (checked
// like SASL OAUTHBEARER).
type Credentials struct {
	// Scheme is "basic" or "bearer".
	Scheme             string
	Username, Password string
	Token              string
	ClientHost         string
}

// Authenticator checks HTTP credentials with the Kafka listener's
// mechanisms and returns the principal ("User:alice").
type Authenticator interface {
	AuthenticateHTTP(ctx context.Context, c Credentials) (principal string, err error)
}

// ErrUnauthenticated is returned (wrapped) by an Authenticator that
// rejects credentials or cannot check their scheme.
var ErrUnauthenticated = errors.New("authentication failed")

type principalKey struct{}

// WithPrincipal returns ctx carrying the principal of an HTTP request.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// RequestPrincipal is the principal of the HTTP request ctx belongs to.
// ok is false for a context that did not come through the HTTP listener
// (the broker's own work, such as the lag sampler), which is trusted.
func RequestPrincipal(ctx context.Context) (principal string, ok bool) {
	p, ok := ctx.Value(principalKey{}).(string)
	return p, ok
}

// anonymous is the principal of a request without credentials.
const anonymous = "User:ANONYMOUS"

// consoleHeader marks the console's requests: they are answered 401 without
// a WWW-Authenticate challenge, so the browser does not pop up its own
// login dialog over the console's.
const consoleHeader = "X-Gregor-Console"

// authenticate wraps h: a request with an Authorization header is
// authenticated (401 on failure); one without is User:ANONYMOUS, or 401
// when required. The principal and client host travel in the context.
func authenticate(a Authenticator, required bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		ctx := context.WithValue(r.Context(), clientHostKey{}, host)
		principal := anonymous
		if hdr := r.Header.Get("Authorization"); hdr != "" {
			c, err := parseAuthorization(hdr)
			if err == nil && a == nil {
				err = fmt.Errorf("%w: this broker has no SASL mechanism to check credentials with", ErrUnauthenticated)
			}
			if err == nil {
				c.ClientHost = host
				principal, err = a.AuthenticateHTTP(ctx, c)
			}
			if err != nil {
				challenge(w, r)
				writeJSONError(w, http.StatusUnauthorized, "authentication failed: check the user name and password or the token")
				return
			}
		} else if required {
			challenge(w, r)
			writeJSONError(w, http.StatusUnauthorized,
				"authentication required: send HTTP Basic credentials of a SASL user or a Bearer token")
			return
		}
		h.ServeHTTP(w, r.WithContext(WithPrincipal(ctx, principal)))
	})
}

func challenge(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(consoleHeader) == "" {
		w.Header().Add("WWW-Authenticate", `Basic realm="gregor", charset="UTF-8"`)
		w.Header().Add("WWW-Authenticate", `Bearer realm="gregor"`)
	}
}

// parseAuthorization reads an Authorization header value.
func parseAuthorization(v string) (Credentials, error) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok {
		return Credentials{}, fmt.Errorf("%w: malformed Authorization header", ErrUnauthenticated)
	}
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(scheme) {
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return Credentials{}, fmt.Errorf("%w: Basic credentials are not base64", ErrUnauthenticated)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok || user == "" || pass == "" {
			return Credentials{}, fmt.Errorf("%w: Basic credentials want user:password", ErrUnauthenticated)
		}
		return Credentials{Scheme: "basic", Username: user, Password: pass}, nil
	case "bearer":
		if rest == "" {
			return Credentials{}, fmt.Errorf("%w: empty Bearer token", ErrUnauthenticated)
		}
		return Credentials{Scheme: "bearer", Token: rest}, nil
	}
	return Credentials{}, fmt.Errorf("%w: unsupported scheme %q", ErrUnauthenticated, scheme)
}
