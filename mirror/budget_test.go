package mirror

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestByteBudgetServesInOrder: a partition that gives bytes back and asks
// again queues behind those already waiting (without it, caught-up
// partitions' long polls took the whole budget in turn and the others
// starved: TestMirrorLinkManyPartitionsBounded copied 33 of 200 partitions
// in 3 minutes); a waiter whose context ends leaves the queue.
func TestByteBudgetServesInOrder(t *testing.T) {
	b := newByteBudget(100, prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}))
	ctx := context.Background()
	if err := b.acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 2)
	waiting := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; {
			b.mu.Lock()
			l := len(b.waiters)
			b.mu.Unlock()
			if l == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d waiters, want %d", l, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	go func() { _ = b.acquire(ctx, 50); got <- 1 }()
	waiting(1)
	if b.tryAcquire(10) {
		t.Fatal("tryAcquire went ahead of a waiter")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan error, 1)
	go func() { cancelled <- b.acquire(cctx, 90) }()
	waiting(2)
	cancel()
	if err := <-cancelled; err == nil {
		t.Fatal("a cancelled acquire succeeded")
	}
	waiting(1)
	// 30 would fit beside the 60 held, but queues behind the 50.
	go func() { _ = b.acquire(ctx, 30); got <- 2 }()
	waiting(2)
	b.release(60) // room for 50, then 30
	<-got
	<-got
	if b.used != 80 {
		t.Fatalf("used %d, want 80", b.used)
	}
	b.force(40) // 120 of 100
	if b.tryAcquire(1) {
		t.Fatal("tryAcquire past the limit")
	}
	b.release(120)
	if b.used != 0 || len(b.waiters) != 0 {
		t.Fatalf("used %d, %d waiters after everything was given back", b.used, len(b.waiters))
	}
}
