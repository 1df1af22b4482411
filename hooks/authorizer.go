package hooks

import (
	"context"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

// Authorizer is a WebAssembly authorizer implementing the sdk's
// auth.Authorizer: one guest call per batch of actions.
type Authorizer struct {
	m *Module
}

// LoadAuthorizer loads the authorizer module at path. A failing call
// denies every action of the batch and returns the module's error.
func LoadAuthorizer(ctx context.Context, path string, o Options) (*Authorizer, error) {
	m, err := Load(ctx, path, KindAuthorizer, o)
	if err != nil {
		return nil, err
	}
	return &Authorizer{m: m}, nil
}

// Module returns the underlying module (Reload, Watch, Info, Close).
func (a *Authorizer) Module() *Module { return a.m }

// Close closes the module.
func (a *Authorizer) Close(ctx context.Context) error { return a.m.Close(ctx) }

// Authorize implements auth.Authorizer. A decision byte other than deny or
// allow fails the batch.
func (a *Authorizer) Authorize(ctx context.Context, actions []auth.Action, decisions []auth.Decision) error {
	if err := auth.CheckBatch(actions, decisions); err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	err := a.run(ctx, actions, decisions)
	if err == nil {
		return nil
	}
	for i := range actions {
		decisions[i] = auth.Deny
	}
	return fmt.Errorf("hooks: authorizer %s: %w", a.m.path, err)
}

func (a *Authorizer) run(ctx context.Context, actions []auth.Action, decisions []auth.Decision) error {
	g, in, err := a.m.acquire(ctx)
	if err != nil {
		return err
	}
	var failed error
	defer func() { a.m.put(ctx, g, in, failed) }()
	slots := abi.SlotsSize(len(actions), 1)
	size := slots + abi.ActionsSize(actions)
	view, err := in.buffer(ctx, size, a.m.opts)
	if err != nil {
		if isInstanceFailure(err) {
			failed = err
		}
		return err
	}
	abi.PutActions(view[slots:], actions)
	in.stack[0], in.stack[1], in.stack[2] = uint64(in.bufPtr), uint64(size), uint64(len(actions))
	if err := in.invoke(ctx, in.fn, a.m.opts); err != nil {
		failed = err
		return err
	}
	if code := int32(in.stack[0]); code != abi.OK {
		return &GuestError{Code: code}
	}
	res, err := in.output(len(actions))
	if err != nil {
		failed = err
		return err
	}
	for i, b := range res {
		d := auth.Decision(b)
		if d != auth.Allow && d != auth.Deny {
			return fmt.Errorf("%w: action %d: decision byte %d", ErrGuest, i, b)
		}
		decisions[i] = d
	}
	return nil
}
