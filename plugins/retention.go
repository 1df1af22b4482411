package plugins

import (
	"context"
	"fmt"
	"sync"

	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// Retention is a retention.Policy served by a plugin process. It is safe
// for concurrent use. Hand the broker Policy(), which also carries the
// plugin's group interest when it declared one.
type Retention struct {
	extension

	mu       sync.Mutex // guards declared and groups
	declared bool
	groups   []string
}

var _ retention.Policy = (*Retention)(nil)

// OpenRetention starts a retention plugin. A failing call returns its
// error; the fallback is the caller's.
func OpenRetention(cfg Config) (*Retention, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(sdkplugin.KindRetention); err != nil {
		return nil, err
	}
	r := &Retention{}
	proc, err := startProcess(cfg, func(ctx context.Context, raw any) error {
		c := raw.(pb.RetentionClient)
		if _, err := c.Configure(ctx, configureRequest(cfg)); err != nil {
			return err
		}
		gi, err := c.GroupInterest(ctx, &pb.GroupInterestRequest{})
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.declared, r.groups = gi.GetDeclared(), gi.GetGroups()
		r.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.extension = extension{proc: proc}
	return r, nil
}

// DeclaredGroups is the groups the plugin asked for at its last start, and
// whether it declared any interest at all; when it did not, the broker
// passes every group with a commit for the partition.
func (r *Retention) DeclaredGroups() (groups []string, declared bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.groups...), r.declared
}

// Policy is r as the broker should see it: also a retention.GroupInterest
// when the plugin declared the groups it needs at its first start.
func (r *Retention) Policy() retention.Policy {
	if _, declared := r.DeclaredGroups(); declared {
		return withGroups{r}
	}
	return r
}

type withGroups struct{ *Retention }

// Groups implements retention.GroupInterest.
func (w withGroups) Groups() []string {
	g, _ := w.DeclaredGroups()
	return g
}

// DeletableSegments implements retention.Policy.
func (r *Retention) DeletableSegments(ctx context.Context, p retention.Partition) (int, error) {
	var n int
	err := r.proc.call(ctx, "retention", func(ctx context.Context, raw any) error {
		resp, err := raw.(pb.RetentionClient).DeletableSegments(ctx, sdkplugin.PartitionToProto(p))
		if err != nil {
			return err
		}
		n = int(resp.GetCount())
		if err := retention.Check(p, n); err != nil {
			return fmt.Errorf("%w: %w", ErrExtension, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
