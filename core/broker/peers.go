package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/replication"
)

// requestTimeout bounds one request to another broker or the controller
// made on a handler's behalf.
const requestTimeout = 30 * time.Second

// SendPeer calls send with the client of broker id on its inter-broker
// listener, under a context bounded by requestTimeout and the broker's life.
func (b *Broker) SendPeer(id int32, channel replication.Channel, send func(ctx context.Context, cl kmsg.Requestor) error) error {
	if b.Peers == nil {
		return fmt.Errorf("broker: broker %d: this broker has no inter-broker clients", id)
	}
	ctx, cancel := b.requestCtx()
	defer cancel()
	return b.Peers.Send(ctx, id, b.ReplicaAddr(b.Controller.Image(), id), channel, send)
}

// requestCtx is a context bounded by requestTimeout and the broker's life.
func (b *Broker) requestCtx() (context.Context, context.CancelFunc) {
	return b.RequestContext(requestTimeout)
}

// RequestContext is a context bounded by d and the broker's life: the one
// the handlers and the broker's own inter-broker calls run under.
func (b *Broker) RequestContext(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	if b.Done != nil {
		go func() {
			select {
			case <-b.Done:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}
