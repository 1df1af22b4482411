package protocol

import (
	"context"
	"net"
	"sync"
	"time"
)

// A connection's memory is bounded in three places: a request frame by
// MaxRequestBytes; the requests read but not yet answered, across every
// connection, by RequestBytes (queued.max.request.bytes); and the encoded
// responses one connection has waiting to be written by
// MaxQueuedResponseBytes. At either bound the connection is muted: nothing
// more is read from it until the bytes fall below the bound, as Kafka
// mutes a channel with an unsent response. Writes that make no progress
// for IdleTimeout close the connection, so a client that never reads its
// socket cannot hold responses forever.

// ByteBudget counts bytes against a bound; waiters resume when it falls
// below. Its methods are safe for concurrent use; a nil budget is
// unbounded.
type ByteBudget struct {
	// Max is the bound; 0 or less is none.
	Max int64

	mu      sync.Mutex // guards n and changed
	n       int64
	changed chan struct{} // closed and replaced whenever n falls
}

// NewByteBudget is a budget of max bytes; max <= 0 returns nil (none).
func NewByteBudget(max int64) *ByteBudget {
	if max <= 0 {
		return nil
	}
	return &ByteBudget{Max: max}
}

func (b *ByteBudget) add(d int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.n += d
	if d < 0 && b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	b.mu.Unlock()
}

// full returns nil when below the bound, else a channel closed when the
// count next falls.
func (b *ByteBudget) full() <-chan struct{} {
	if b == nil || b.Max <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n < b.Max {
		return nil
	}
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}

// waitBelow blocks while any budget is at its bound; false when ctx ended
// first.
func waitBelow(ctx context.Context, m *Metrics, budgets ...*ByteBudget) bool {
	muted := false
	defer func() {
		if muted {
			m.mutedBy(-1)
		}
	}()
	for {
		var ch <-chan struct{}
		for _, b := range budgets {
			if ch = b.full(); ch != nil {
				break
			}
		}
		if ch == nil {
			return true
		}
		if !muted {
			muted = true
			m.mutedBy(1)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// writeChunk is how much of a response is written under one deadline.
const writeChunk = 256 << 10

// writeAll writes buf in chunks, each of which must complete within
// timeout: a peer that stops reading is cut off after timeout, one that
// reads slowly but steadily is not.
func writeAll(c net.Conn, buf []byte, timeout time.Duration) error {
	for len(buf) > 0 {
		n := min(len(buf), writeChunk)
		c.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := c.Write(buf[:n]); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}
