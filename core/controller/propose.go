package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// checkActive reports ErrNotController unless this node is the active
// controller with its leadership record applied.
func (c *Controller) checkActive() error {
	c.mu.Lock()
	ready, closed := c.ready, c.closed
	c.mu.Unlock()
	if closed {
		return fmt.Errorf("controller: node %d is closed: %w", c.cfg.NodeID, ErrNotController)
	}
	if !ready {
		_, leader := c.raft.LeaderWithID()
		if leader == "" {
			leader = "none"
		}
		return fmt.Errorf("controller: node %d is not the active controller (raft leader: %s): %w",
			c.cfg.NodeID, leader, ErrNotController)
	}
	return nil
}

// isActive reports whether this node is the active controller, ready to
// write.
func (c *Controller) isActive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ready && !c.closed
}

// checkWritable reports ErrNotController unless this node can write
// metadata: as the active controller, or (in a multi-node cluster) by
// forwarding to it. In the latter case it first catches up with the
// active controller's metadata offset, so the write is planned on an
// image at least as new as the controller's was when asked.
func (c *Controller) checkWritable(ctx context.Context) error {
	if c.isActive() || c.peers == nil {
		return c.checkActive()
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return fmt.Errorf("controller: node %d is closed: %w", c.cfg.NodeID, ErrNotController)
	}
	if isLocalOnly(ctx) {
		return fmt.Errorf("controller: node %d is not the active controller: %w", c.cfg.NodeID, ErrNotController)
	}
	_, err := c.forward(ctx, &forwardRequest{Barrier: true})
	return err
}

// proposeAll appends each record as its own raft entry (raft pipelines
// them) and waits for each to be applied, so each applies or fails alone:
// it is for independent records (one per partition or request). Records
// that must apply together go through proposePlan. errs[i] is nil when records[i] was
// committed and applied; otherwise it is the apply's rejection, a raft
// failure (wrapping ErrNotController), or ctx's error, in which case the
// outcome is unknown. Callers hold writeMu.
func (c *Controller) proposeAll(ctx context.Context, records []record) []error {
	if len(records) == 0 {
		return nil
	}
	if !c.isActive() {
		return c.forwardRecords(ctx, records)
	}
	errs := make([]error, len(records))
	futures := make([]raft.ApplyFuture, len(records))
	var enqueue time.Duration // 0: wait as long as raft needs
	if dl, ok := ctx.Deadline(); ok {
		if enqueue = time.Until(dl); enqueue <= 0 {
			for i := range errs {
				errs[i] = fmt.Errorf("controller: %w", context.DeadlineExceeded)
			}
			return errs
		}
	}
	for i, r := range records {
		data, err := encodeRecord(r)
		if err != nil {
			errs[i] = err
			continue
		}
		futures[i] = c.raft.Apply(data, enqueue)
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, f := range futures {
			if f == nil {
				continue
			}
			if err := f.Error(); err != nil {
				errs[i] = raftError(err)
				continue
			}
			if rerr, ok := f.Response().(error); ok {
				errs[i] = rerr
			}
		}
	}()
	select {
	case <-done:
		return errs
	case <-ctx.Done():
		// The entries may still commit; the fsm rejects any that conflict
		// with later writes, so releasing writeMu now is safe.
		out := make([]error, len(records))
		for i := range out {
			out[i] = fmt.Errorf("controller: outcome unknown: %w", ctx.Err())
		}
		return out
	}
}

// proposeAsActive is proposeAll for a plan made from this node's image
// while it was the active controller: if leadership has moved since, every
// record fails with ErrNotController, so the caller retries against the new
// controller, instead of the stale plan being forwarded there (the new
// controller refuses broker-state records from a peer).
func (c *Controller) proposeAsActive(ctx context.Context, records []record) []error {
	if len(records) > 0 && !c.isActive() {
		errs := make([]error, len(records))
		for i := range errs {
			errs[i] = fmt.Errorf("controller: node %d: %w: leadership moved while planning", c.cfg.NodeID, ErrNotController)
		}
		return errs
	}
	return c.proposeAll(ctx, records)
}

// propose is proposeAll for one record.
func (c *Controller) propose(ctx context.Context, r record) error {
	return c.proposeAll(ctx, []record{r})[0]
}

// raftError maps raft's leadership and shutdown errors to ErrNotController.
func raftError(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("controller: %w: %w", ErrNotController, err)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("controller: %w: %w", context.DeadlineExceeded, err)
	}
	return fmt.Errorf("controller: raft: %w", err)
}
