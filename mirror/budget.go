package mirror

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// minFetchShare is the smallest fetch a link partition makes when the
// budget is split between many partitions: below it, requests and their
// headers outweigh the records they carry.
const minFetchShare = 64 << 10

// byteBudget is link mode's mirror-wide bound on buffered bytes
// (mirror.buffer_memory): every source fetch takes its maximum size from it
// before it is sent and gives it back once its batches are acknowledged by
// the target, or at once when it brought nothing to write. Waiters are
// served in order: a partition that gives bytes back and asks again (an
// idle partition's next long poll) goes behind those already waiting, so
// none starves.
type byteBudget struct {
	limit int64
	gauge prometheus.Gauge
	// mu guards used and waiters.
	mu      sync.Mutex
	used    int64
	waiters []*budgetWaiter
}

// budgetWaiter is an acquire waiting its turn; ready is closed once its
// bytes are taken for it.
type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

func newByteBudget(limit int64, gauge prometheus.Gauge) *byteBudget {
	return &byteBudget{limit: limit, gauge: gauge}
}

// fits reports whether n more bytes stay within the limit; one request
// larger than the whole limit fits an empty budget, so it cannot wait
// forever.
func (b *byteBudget) fits(n int64) bool { return b.used == 0 || b.used+n <= b.limit }

// acquire takes n bytes, waiting its turn until they fit or ctx ends. A
// caller holds nothing else of the budget while it waits, so waiters
// cannot block each other for good.
func (b *byteBudget) acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	if len(b.waiters) == 0 && b.fits(n) {
		b.take(n)
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	select {
	case <-w.ready: // granted meanwhile: give it back
		b.used -= n
		b.gauge.Set(float64(b.used))
	default:
		for i, o := range b.waiters {
			if o == w {
				b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
				break
			}
		}
	}
	b.grant()
	b.mu.Unlock()
	return ctx.Err()
}

// tryAcquire takes n bytes if they fit now and nobody waits.
func (b *byteBudget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) > 0 || !b.fits(n) {
		return false
	}
	b.take(n)
	return true
}

// force takes n bytes already in memory (a batch larger than its fetch's
// share): the budget may go past its limit, and waiters wait until it is
// back below.
func (b *byteBudget) force(n int64) {
	b.mu.Lock()
	b.take(n)
	b.mu.Unlock()
}

func (b *byteBudget) take(n int64) {
	b.used += n
	b.gauge.Set(float64(b.used))
}

// release gives n bytes back and serves the waiters they make room for.
func (b *byteBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.gauge.Set(float64(b.used))
	b.grant()
	b.mu.Unlock()
}

// grant takes bytes for the waiters at the head of the queue while they
// fit, in order. b.mu is held.
func (b *byteBudget) grant() {
	for len(b.waiters) > 0 && b.fits(b.waiters[0].n) {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.take(w.n)
		close(w.ready)
	}
}

// share is the fetch size of one of n partitions, each with up to two
// fetches in flight (one written, one read ahead): the budget split
// between them, at most max_fetch_bytes and at least minFetchShare (then
// the budget, not the split, is what bounds the bytes).
func (b *byteBudget) share(n int, maxFetch int32) int32 {
	s := b.limit / int64(2*max(n, 1))
	return int32(min(max(s, minFetchShare), int64(maxFetch), b.limit))
}
