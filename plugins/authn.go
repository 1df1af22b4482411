package plugins

import (
	"context"
	"fmt"
	"sync"

	"github.com/gregorbroker/gregor/sdk/auth"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
)

// Authenticator is an auth.Authenticator served by a plugin process. It is
// safe for concurrent use. Results are not cached: they depend on secrets
// the broker should not keep.
type Authenticator struct {
	extension

	mu         sync.Mutex // guards mechanisms
	mechanisms []string
}

var _ auth.Authenticator = (*Authenticator)(nil)

// OpenAuthenticator starts an authenticator plugin. A failing call fails
// the authentication with its error.
func OpenAuthenticator(cfg Config) (*Authenticator, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(sdkplugin.KindAuthenticator); err != nil {
		return nil, err
	}
	a := &Authenticator{}
	proc, err := startProcess(cfg, func(ctx context.Context, raw any) error {
		c := raw.(pb.AuthenticatorClient)
		if _, err := c.Configure(ctx, configureRequest(cfg)); err != nil {
			return err
		}
		m, err := c.Mechanisms(ctx, &pb.MechanismsRequest{})
		if err != nil {
			return err
		}
		a.mu.Lock()
		a.mechanisms = m.GetMechanisms()
		a.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	a.extension = extension{proc: proc}
	return a, nil
}

// Mechanisms implements auth.Authenticator: the mechanisms the plugin
// named at its last start.
func (a *Authenticator) Mechanisms() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.mechanisms...)
}

// Authenticate implements auth.Authenticator. Rejected credentials give an
// error wrapping auth.ErrAuthenticationFailed.
func (a *Authenticator) Authenticate(ctx context.Context, c auth.Credentials) (auth.Principal, error) {
	var (
		p      auth.Principal
		reject string
	)
	err := a.proc.call(ctx, "authenticate", func(ctx context.Context, raw any) error {
		resp, err := raw.(pb.AuthenticatorClient).Authenticate(ctx, sdkplugin.CredentialsToProto(c))
		if err != nil {
			return err
		}
		if resp.GetFailed() {
			reject = resp.GetReason()
			return nil
		}
		p = sdkplugin.PrincipalFromProto(resp.GetPrincipal())
		if p.Type == "" || p.Name == "" {
			return fmt.Errorf("%w: answered an empty principal %q", ErrExtension, p.String())
		}
		return nil
	})
	if err != nil {
		return auth.Principal{}, err
	}
	if reject != "" || p == (auth.Principal{}) {
		return auth.Principal{}, fmt.Errorf("plugins: %s: %w: %s", a.Name(), auth.ErrAuthenticationFailed, reject)
	}
	return p, nil
}
