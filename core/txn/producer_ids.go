package txn

import (
	"context"
	"fmt"
	"sync"
)

// ProducerIDBlock is how many producer ids one controller round trip
// reserves.
const ProducerIDBlock = 1000

// BlockReserver reserves count consecutive producer ids in the cluster's
// metadata log and returns the first (the controller's AllocateProducerIDs).
// A reserved block is never handed out again, across restarts too.
type BlockReserver interface {
	AllocateProducerIDs(ctx context.Context, count int32) (int64, error)
}

// ProducerIDs hands out producer ids to idempotent and transactional
// producers from blocks reserved through a BlockReserver, one round trip per
// block. Ids left in a block when the broker stops are never used.
type ProducerIDs struct {
	reserve BlockReserver
	block   int32

	mu   sync.Mutex // guards next and end; held across a reservation
	next int64      // the next id to hand out
	end  int64      // one past the last id of the current block
}

// NewProducerIDs returns an allocator reserving blocks of block ids
// (ProducerIDBlock when not positive) from r.
func NewProducerIDs(r BlockReserver, block int32) *ProducerIDs {
	if block <= 0 {
		block = ProducerIDBlock
	}
	return &ProducerIDs{reserve: r, block: block}
}

// Next returns a producer id never handed out before, reserving a new block
// under ctx when the current one is used up. A failed reservation uses no id.
func (a *ProducerIDs) Next(ctx context.Context) (int64, error) {
	if a == nil {
		return -1, fmt.Errorf("txn: no producer id allocator")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next >= a.end {
		first, err := a.reserve.AllocateProducerIDs(ctx, a.block)
		if err != nil {
			return -1, fmt.Errorf("txn: reserving %d producer ids: %w", a.block, err)
		}
		a.next, a.end = first, first+int64(a.block)
	}
	id := a.next
	a.next++
	return id, nil
}
