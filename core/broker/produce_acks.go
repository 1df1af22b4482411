package broker

import (
	"context"

	"github.com/gregorbroker/gregor/core/partition"
)

// AckWait is one partition of an acks=all produce waiting for its batch to
// be committed: the high watermark past the batch while the ISR holds at
// least min.insync.replicas, all in the leader epoch it was appended in.
type AckWait struct {
	Partition *partition.Partition
	Epoch     int32 // the leader epoch the batch was appended in
	Offset    int64 // the offset after the batch
}

// Settled reports whether the batch needs no waiting (a lone replica
// commits on append) and, if so, its outcome.
func (w AckWait) Settled() (done bool, err error) {
	return w.Partition.ReplicatedInEpoch(w.Epoch, w.Offset)
}

// Wait waits for the batch to be committed or ctx to end.
func (w AckWait) Wait(ctx context.Context) error {
	return w.Partition.WaitReplicated(ctx, w.Epoch, w.Offset)
}
