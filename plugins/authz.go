package plugins

import (
	"context"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/auth"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
)

// Authorizer is an auth.Authorizer served by a plugin process. It is safe
// for concurrent use. Its decisions are cached by the broker
// (core/extension), as every authorizer's are.
type Authorizer struct {
	extension
}

var _ auth.Authorizer = (*Authorizer)(nil)

// OpenAuthorizer starts an authorizer plugin. A failing call denies every
// action of the batch and returns its error.
func OpenAuthorizer(cfg Config) (*Authorizer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(sdkplugin.KindAuthorizer); err != nil {
		return nil, err
	}
	proc, err := startProcess(cfg, func(ctx context.Context, raw any) error {
		_, err := raw.(pb.AuthorizerClient).Configure(ctx, configureRequest(cfg))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Authorizer{extension: extension{proc: proc}}, nil
}

// Authorize implements auth.Authorizer with one call to the plugin for the
// batch.
func (z *Authorizer) Authorize(ctx context.Context, actions []auth.Action, decisions []auth.Decision) error {
	if err := auth.CheckBatch(actions, decisions); err != nil {
		return err
	}
	if len(actions) == 0 {
		return nil
	}
	err := z.proc.call(ctx, "authorize", func(ctx context.Context, raw any) error {
		resp, err := raw.(pb.AuthorizerClient).Authorize(ctx, &pb.AuthorizeRequest{Actions: sdkplugin.ActionsToProto(actions)})
		if err != nil {
			return err
		}
		allowed := resp.GetAllowed()
		if len(allowed) != len(actions) {
			return fmt.Errorf("%w: %d decisions for %d actions", ErrExtension, len(allowed), len(actions))
		}
		for i, ok := range allowed {
			decisions[i] = auth.Deny
			if ok {
				decisions[i] = auth.Allow
			}
		}
		return nil
	})
	if err != nil {
		for i := range decisions {
			decisions[i] = auth.Deny
		}
	}
	return err
}
