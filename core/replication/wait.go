package replication

import (
	"context"
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/core/partition"
)

// ErrTimeout is an acks=all produce whose batch was not committed within
// the request's timeout (REQUEST_TIMED_OUT).
var ErrTimeout = errors.New("replication: timed out waiting for in-sync replicas")

// WaitReplicated blocks until p's high watermark reaches offset (the offset
// after the produced batch), as an acks=all produce waits. It returns nil
// when the batch is committed by at least min.insync.replicas replicas,
// partition.ErrNotEnoughReplicasAfterAppend when committed by fewer,
// partition.ErrNotLeader when leadership moved away, and ErrTimeout when ctx
// ends first.
func WaitReplicated(ctx context.Context, p *partition.Partition, offset int64) error {
	for {
		changed := p.HighWatermarkChanged()
		if done, err := p.Replicated(offset); done {
			return err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%w: %s-%d at offset %d: %v", ErrTimeout, p.Topic, p.Index, offset, ctx.Err())
		}
	}
}
