package hooks

import (
	"context"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/retention"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

// RetentionPolicy is a WebAssembly retention policy implementing the sdk's
// retention.Policy: one guest call per partition per cleaner round.
type RetentionPolicy struct {
	m *Module
}

// LoadRetentionPolicy loads the retention module at path. A failing call
// returns the module's error; the fallback is the caller's.
func LoadRetentionPolicy(ctx context.Context, path string, o Options) (*RetentionPolicy, error) {
	m, err := Load(ctx, path, KindRetention, o)
	if err != nil {
		return nil, err
	}
	return &RetentionPolicy{m: m}, nil
}

// Module returns the underlying module (Reload, Watch, Info, Close).
func (r *RetentionPolicy) Module() *Module { return r.m }

// Close closes the module.
func (r *RetentionPolicy) Close(ctx context.Context) error { return r.m.Close(ctx) }

// DeletableSegments implements retention.Policy.
func (r *RetentionPolicy) DeletableSegments(ctx context.Context, p retention.Partition) (int, error) {
	n, err := r.run(ctx, &p)
	if err == nil {
		err = retention.Check(p, n)
	}
	if err != nil {
		return 0, fmt.Errorf("hooks: retention %s: %s-%d: %w", r.m.path, p.Topic, p.Partition, err)
	}
	return n, nil
}

func (r *RetentionPolicy) run(ctx context.Context, p *retention.Partition) (int, error) {
	g, in, err := r.m.acquire(ctx)
	if err != nil {
		return 0, err
	}
	var failed error
	defer func() { r.m.put(ctx, g, in, failed) }()
	size := abi.PartitionSize(p)
	view, err := in.buffer(ctx, size, r.m.opts)
	if err != nil {
		if isInstanceFailure(err) {
			failed = err
		}
		return 0, err
	}
	abi.PutPartition(view, p)
	in.stack[0], in.stack[1] = uint64(in.bufPtr), uint64(size)
	if err := in.invoke(ctx, in.fn, r.m.opts); err != nil {
		failed = err
		return 0, err
	}
	res := int32(in.stack[0])
	if res < 0 {
		return 0, &GuestError{Code: -res}
	}
	return int(res), nil
}
