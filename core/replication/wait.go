package replication

import (
	"context"

	"github.com/gregorbroker/gregor/core/partition"
)

// ErrTimeout is an acks=all produce whose batch was not committed within
// the request's timeout (REQUEST_TIMED_OUT).
var ErrTimeout = partition.ErrReplicationTimeout

// WaitReplicated blocks until p's high watermark reaches offset (the offset
// after the produced batch), as an acks=all produce waits. It returns nil
// when the batch is committed by at least min.insync.replicas replicas,
// partition.ErrNotEnoughReplicasAfterAppend when committed by fewer,
// partition.ErrNotLeader when leadership moved away, and ErrTimeout when ctx
// ends first. Partition.WaitReplicated also fences by leader epoch.
func WaitReplicated(ctx context.Context, p *partition.Partition, offset int64) error {
	return p.WaitReplicated(ctx, partition.AnyEpoch, offset)
}
