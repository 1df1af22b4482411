package api

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/partition"
)

// ackWait is one partition of an acks=all produce waiting for its batch to
// be committed; topic and part index its answer in the response.
type ackWait struct {
	broker.AckWait
	topic, part int
}

// settleAcks answers the waits that need no waiting (a lone replica commits
// on append) and returns the rest.
func settleAcks(resp *kmsg.ProduceResponse, waits []ackWait) []ackWait {
	rest := waits[:0]
	for _, w := range waits {
		done, err := w.Settled()
		if !done {
			rest = append(rest, w)
			continue
		}
		setAckError(resp, w, err)
	}
	return rest
}

// awaitAcks waits for every partition's high watermark to pass its batch,
// at most timeoutMs, and sets each answer's error from the outcome.
func (b *Broker) awaitAcks(resp *kmsg.ProduceResponse, waits []ackWait, timeoutMs int32) {
	ctx, cancel := b.ctx(timeoutMs)
	defer cancel()
	for _, w := range waits {
		setAckError(resp, w, w.Wait(ctx))
	}
}

func setAckError(resp *kmsg.ProduceResponse, w ackWait, err error) {
	if err == nil {
		return
	}
	sp := &resp.Topics[w.topic].Partitions[w.part]
	if sp.ErrorCode != 0 {
		return
	}
	switch {
	case errors.Is(err, partition.ErrNotEnoughReplicasAfterAppend):
		// Kafka keeps the offsets: the batch is in the log.
		sp.ErrorCode = kerr.NotEnoughReplicasAfterAppend.Code
	case errors.Is(err, partition.ErrNotLeader):
		sp.ErrorCode, sp.BaseOffset = kerr.NotLeaderForPartition.Code, -1
	case errors.Is(err, partition.ErrReplicationTimeout):
		sp.ErrorCode, sp.BaseOffset = kerr.RequestTimedOut.Code, -1
	default:
		sp.ErrorCode, sp.BaseOffset = errCode(err), -1
	}
	sp.ErrorMessage = errMessage(err)
}
