package broker

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gregorbroker/gregor/core/controller"
)

// fakeImages is an image source the test drives: Subscribe's channel
// delivers what the test sends, Image returns what the test set.
type fakeImages struct {
	ch chan *controller.Image

	mu  sync.Mutex // guards cur
	cur *controller.Image
}

func newFakeImages() *fakeImages {
	return &fakeImages{ch: make(chan *controller.Image, 16), cur: &controller.Image{}}
}

func (f *fakeImages) Image() *controller.Image {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur
}

func (f *fakeImages) Subscribe() (<-chan *controller.Image, func()) { return f.ch, func() {} }

// publish makes im current and delivers it, as the controller does.
func (f *fakeImages) publish(im *controller.Image) {
	f.mu.Lock()
	f.cur = im
	f.mu.Unlock()
	f.ch <- im
}

// countingApplier runs an applier whose apply records the images applied,
// until the test ends.
func countingApplier(t *testing.T, src Images) (*applier, func() []*controller.Image) {
	t.Helper()
	var mu sync.Mutex
	var applied []*controller.Image
	a := &applier{}
	a.init(func(im *controller.Image) error {
		mu.Lock()
		defer mu.Unlock()
		applied = append(applied, im)
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.run(ctx, src, func(err error) { t.Errorf("apply: %v", err) }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return a, func() []*controller.Image {
		mu.Lock()
		defer mu.Unlock()
		return append([]*controller.Image(nil), applied...)
	}
}

// Each image is applied once however often it is delivered, an image
// older than the one applied is not applied, and a waiter returns once
// its offset is applied.
func TestApplierAppliesEachImageOnce(t *testing.T) {
	src := newFakeImages()
	a, applied := countingApplier(t, src)
	ctx := context.Background()
	im1, im2, im3 := &controller.Image{Offset: 1}, &controller.Image{Offset: 2}, &controller.Image{Offset: 3}

	src.publish(im1)
	if err := a.wait(ctx, 1); err != nil {
		t.Fatalf("wait 1: %v", err)
	}
	src.publish(im1) // delivered again: no change
	src.publish(im2)
	if err := a.wait(ctx, 2); err != nil {
		t.Fatalf("wait 2: %v", err)
	}
	// A subscription late with an older image after a newer one was read.
	src.publish(im3)
	if err := a.wait(ctx, 3); err != nil {
		t.Fatalf("wait 3: %v", err)
	}
	src.ch <- im2
	im4 := &controller.Image{Offset: 4}
	src.publish(im4)
	if err := a.wait(ctx, 4); err != nil {
		t.Fatalf("wait 4: %v", err)
	}
	got := applied()
	want := []*controller.Image{im1, im2, im3, im4}
	if len(got) != len(want) {
		t.Fatalf("applied %d images, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("image %d applied is at offset %d, want %d", i, got[i].Offset, want[i].Offset)
		}
	}
}

// A waiter for an offset not yet applied waits; it returns once the
// applier applied that offset, which a waiter's kick makes it read from
// the source even when the subscription has not delivered it.
func TestApplierWaiterReturnsWhenItsOffsetIsApplied(t *testing.T) {
	src := newFakeImages()
	a, applied := countingApplier(t, src)
	ctx := context.Background()
	src.publish(&controller.Image{Offset: 1})
	if err := a.wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() { waiting <- a.wait(ctx, 5) }()
	// Offset 3 does not satisfy the waiter for 5.
	src.publish(&controller.Image{Offset: 3})
	if err := a.wait(ctx, 3); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waiting:
		t.Fatalf("waiter for offset 5 returned (%v) with offset 3 applied", err)
	default:
	}
	// The image at 5 is current but not delivered: the next waiter's kick
	// reads it.
	src.mu.Lock()
	src.cur = &controller.Image{Offset: 5}
	src.mu.Unlock()
	if err := a.wait(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; err != nil {
		t.Fatalf("waiter for offset 5: %v", err)
	}
	if n := len(applied()); n != 3 {
		t.Fatalf("applied %d images, want 3", n)
	}
	// An offset already applied returns at once.
	if err := a.wait(ctx, 2); err != nil {
		t.Fatal(err)
	}
}

// Cancelling the context ends a wait; stopping the applier ends the others
// and refuses new ones.
func TestApplierWaitEndsWithContextAndStop(t *testing.T) {
	src := newFakeImages()
	a := &applier{}
	a.init(func(*controller.Image) error { return nil })
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- a.run(ctx, src, func(err error) { t.Errorf("apply: %v", err) }) }()

	wctx, wcancel := context.WithCancel(context.Background())
	waiting := make(chan error, 1)
	go func() { waiting <- a.wait(wctx, 7) }()
	wcancel()
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v, want context.Canceled", err)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- a.wait(context.Background(), 9) }()
	cancel()
	if err := <-runDone; err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := <-stopped; !errors.Is(err, ErrStopped) {
		t.Fatalf("wait across stop: %v, want ErrStopped", err)
	}
	if err := a.wait(context.Background(), 10); !errors.Is(err, ErrStopped) {
		t.Fatalf("wait after stop: %v, want ErrStopped", err)
	}
}
