package txn

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// blocks reserves consecutive blocks from a counter, as the controller's log
// does, and fails while fail is set.
type blocks struct {
	mu     sync.Mutex
	next   int64
	calls  int
	counts []int32
	fail   error
}

func (b *blocks) AllocateProducerIDs(_ context.Context, count int32) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.fail != nil {
		return -1, b.fail
	}
	b.counts = append(b.counts, count)
	first := b.next
	b.next += int64(count)
	return first, nil
}

// Ids come from the reserved blocks in order, one reservation per block,
// and a failed reservation hands out nothing and is retried by the next
// call.
func TestProducerIDsBlocks(t *testing.T) {
	r := &blocks{next: 5000}
	a := NewProducerIDs(r, 3)
	ctx := context.Background()
	errDown := errors.New("controller down")
	for i, step := range []struct {
		fail      error
		want      int64
		wantCalls int
	}{
		{nil, 5000, 1},
		{nil, 5001, 1},
		{nil, 5002, 1},
		{errDown, -1, 2}, // the block is used up: a reservation, which fails
		{nil, 5003, 3},
		{nil, 5004, 3},
	} {
		r.fail = step.fail
		id, err := a.Next(ctx)
		if step.fail != nil {
			if !errors.Is(err, step.fail) {
				t.Fatalf("step %d: err %v, want %v", i, err, step.fail)
			}
		} else if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if id != step.want || r.calls != step.wantCalls {
			t.Fatalf("step %d: id %d after %d reservations, want %d after %d", i, id, r.calls, step.want, step.wantCalls)
		}
	}
	for _, c := range r.counts {
		if c != 3 {
			t.Fatalf("reserved %v, want blocks of 3", r.counts)
		}
	}
	if NewProducerIDs(r, 0).block != ProducerIDBlock {
		t.Fatal("default block size")
	}
}

// Concurrent callers never get the same id.
func TestProducerIDsConcurrent(t *testing.T) {
	r := &blocks{}
	a := NewProducerIDs(r, 7)
	const callers, each = 8, 50
	ids := make(chan int64, callers*each)
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				id, err := a.Next(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				ids <- id
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != callers*each {
		t.Fatalf("%d ids, want %d", len(seen), callers*each)
	}
}
