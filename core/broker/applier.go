package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gregorbroker/gregor/core/controller"
)

// ErrStopped is the answer to a wait for an image once the applier has
// stopped.
var ErrStopped = errors.New("broker: the metadata applier has stopped")

// Images is where the applier reads metadata images from; the controller
// is one.
type Images interface {
	// Image is the current image.
	Image() *controller.Image
	// Subscribe delivers the current image and then every newer one
	// (possibly skipping some), until cancel is called.
	Subscribe() (images <-chan *controller.Image, cancel func())
}

// Open applies the first image, before Run starts, so that the partitions
// on disk are open before the listeners take requests. It returns the
// first partition that could not be opened; the others are open.
func (b *Broker) Open(im *controller.Image) error {
	b.applier.init(b.apply)
	return b.applier.applyOnce(im)
}

// Run applies every new image from src until ctx ends. It is the one
// goroutine that opens, reconfigures and deletes partitions; waits for an
// image end with ErrStopped once it returns.
func (b *Broker) Run(ctx context.Context, src Images) error {
	b.applier.init(b.apply)
	return b.applier.run(ctx, src, func(err error) {
		b.Logger.Error("applying metadata", "err", err)
	})
}

// WaitApplied waits until the applier has applied an image at offset or
// later (controller.Image.Offset), ctx ends or the applier stops.
func (b *Broker) WaitApplied(ctx context.Context, offset uint64) error {
	b.applier.init(b.apply)
	return b.applier.wait(ctx, offset)
}

// WaitImage waits until the applier has applied the controller's current
// image: a handler calls it after a metadata write (CreateTopics,
// AlterConfigs, ...) so that its effect on this broker's partitions is in
// place before the client hears back.
func (b *Broker) WaitImage(ctx context.Context) error {
	return b.WaitApplied(ctx, b.Controller.Image().Offset)
}

// applier applies metadata images one at a time, on the goroutine that
// runs run (or in applyOnce before run starts), and tells waiters which
// image offset it has reached.
type applier struct {
	once  sync.Once
	apply func(*controller.Image) error
	// kick asks run to read the source's current image; a waiter sends it
	// so that it does not depend on the subscription's delivery.
	kick chan struct{}

	// last is the image applied last; only the applying goroutine reads
	// and writes it.
	last *controller.Image

	mu      sync.Mutex // guards applied, any, stopped, waiters
	applied uint64     // the offset of the last image applied
	any     bool       // whether an image was applied at all
	stopped bool
	waiters map[*imageWaiter]struct{}
}

type imageWaiter struct {
	offset uint64
	done   chan error // buffered: the applier never blocks on it
}

func (a *applier) init(apply func(*controller.Image) error) {
	a.once.Do(func() {
		a.apply = apply
		a.kick = make(chan struct{}, 1)
		a.waiters = map[*imageWaiter]struct{}{}
	})
}

func (a *applier) run(ctx context.Context, src Images, logErr func(error)) error {
	images, cancel := src.Subscribe()
	defer cancel()
	defer a.stop()
	for {
		var im *controller.Image
		select {
		case <-ctx.Done():
			return nil
		case next, ok := <-images:
			if !ok {
				// The controller closed; the broker is stopping.
				<-ctx.Done()
				return nil
			}
			im = next
		case <-a.kick:
			im = src.Image()
		}
		if err := a.applyOnce(im); err != nil {
			logErr(err)
		}
	}
}

// applyOnce applies im unless it is the image applied last or older than
// it (a kick may have read an image newer than the one the subscription
// still delivers), then releases the waiters it satisfies.
func (a *applier) applyOnce(im *controller.Image) error {
	if im == nil || im == a.last {
		return nil
	}
	a.mu.Lock()
	older := a.any && im.Offset < a.applied
	a.mu.Unlock()
	if older {
		return nil
	}
	err := a.apply(im)
	a.last = im
	a.mu.Lock()
	defer a.mu.Unlock()
	a.applied, a.any = im.Offset, true
	for w := range a.waiters {
		if w.offset <= im.Offset {
			w.done <- nil
			delete(a.waiters, w)
		}
	}
	if err != nil {
		return fmt.Errorf("broker: image at offset %d: %w", im.Offset, err)
	}
	return nil
}

func (a *applier) hasApplied(offset uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.any && a.applied >= offset
}

func (a *applier) wait(ctx context.Context, offset uint64) error {
	a.mu.Lock()
	switch {
	case a.any && a.applied >= offset:
		a.mu.Unlock()
		return nil
	case a.stopped:
		a.mu.Unlock()
		return ErrStopped
	}
	w := &imageWaiter{offset: offset, done: make(chan error, 1)}
	a.waiters[w] = struct{}{}
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default: // a kick is already pending
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		a.mu.Lock()
		delete(a.waiters, w)
		a.mu.Unlock()
		return fmt.Errorf("broker: waiting for the image at offset %d: %w", offset, ctx.Err())
	}
}

// stop ends every wait: no image is applied any more.
func (a *applier) stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopped = true
	for w := range a.waiters {
		w.done <- ErrStopped
		delete(a.waiters, w)
	}
}
