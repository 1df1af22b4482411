package httpapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/config"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// SASLAuthenticator authenticates admin API requests with a Kafka
// listener's SASL mechanisms.
type SASLAuthenticator struct {
	Mechanisms *auth.Mechanisms
	// Credentials are the SCRAM credentials (the metadata image's).
	Credentials auth.CredentialStore
}

var _ Authenticator = SASLAuthenticator{}

// AuthenticateHTTP implements Authenticator with the Kafka
// listener's SASL mechanisms: Basic credentials go through PLAIN when it
// is enabled (so an extension's PLAIN authenticator decides too), else
// through the SCRAM credentials when a SCRAM mechanism is enabled; a
// Bearer token goes through OAUTHBEARER.
func (a SASLAuthenticator) AuthenticateHTTP(ctx context.Context, c Credentials) (string, error) {
	ms := a.Mechanisms
	facts := auth.ConnFacts{Listener: "HTTP", ClientHost: c.ClientHost}
	switch c.Scheme {
	case "basic":
		if m, ok := ms.Lookup("PLAIN"); ok {
			ex := m.Start(facts)
			_, done, err := ex.Step(ctx, []byte("\x00"+c.Username+"\x00"+c.Password))
			if err != nil || !done {
				return "", fmt.Errorf("httpapi: HTTP basic: %w", ErrUnauthenticated)
			}
			return ex.Outcome().Principal.String(), nil
		}
		_, s256 := ms.Lookup(auth.ScramSHA256.String())
		_, s512 := ms.Lookup(auth.ScramSHA512.String())
		if (s256 || s512) && auth.VerifyPassword(a.Credentials, c.Username, c.Password) {
			return sdkauth.User(c.Username).String(), nil
		}
		return "", fmt.Errorf("httpapi: HTTP basic: %w", ErrUnauthenticated)
	case "bearer":
		m, ok := ms.Lookup("OAUTHBEARER")
		if !ok {
			return "", fmt.Errorf("httpapi: HTTP bearer: %w: OAUTHBEARER is not enabled", ErrUnauthenticated)
		}
		ex := m.Start(facts)
		msg := "n,,\x01auth=Bearer " + strings.TrimSpace(c.Token) + "\x01\x01"
		_, done, err := ex.Step(ctx, []byte(msg))
		if err != nil || !done {
			return "", fmt.Errorf("httpapi: HTTP bearer: %w", ErrUnauthenticated)
		}
		return ex.Outcome().Principal.String(), nil
	}
	return "", fmt.Errorf("httpapi: HTTP %q: %w", c.Scheme, ErrUnauthenticated)
}

// RequiresAuth reports whether the admin API must refuse requests
// without credentials: when SASL is enabled and every Kafka listener
// authenticates with it.
func RequiresAuth(cfg config.Config) bool {
	if len(cfg.Security.SASLMechanisms) == 0 {
		return false
	}
	for _, l := range cfg.KafkaListeners() {
		if !strings.HasPrefix(strings.ToUpper(l.Protocol), "SASL_") {
			return false
		}
	}
	return true
}
