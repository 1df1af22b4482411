package api

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/replication"
	"github.com/gregorbroker/gregor/core/telemetry"
)

// Broker is what the handlers reach: the hosted partitions and their
// lifecycle (core/broker, whose Config, Controller, Partitions, Groups,
// Txns and Extensions the handlers use directly), and the request-side
// state of this package.
type Broker struct {
	*broker.Broker
	// Done is closed when the broker shuts down; long polls end early.
	Done <-chan struct{}
	// Security authenticates SASL clients and authorizes requests.
	Security Security
	// ISR changes the ISR of the partitions led here; nil never changes it.
	ISR *replication.ISR
	// Peers sends transaction markers and verifications to other brokers;
	// nil reaches no other broker (a lone broker leads everything).
	Peers *Peers
	// Telemetry keeps the client metrics pushed with KIP-714; nil answers
	// the telemetry APIs as a broker without client-metrics support.
	Telemetry *telemetry.Store

	regOnce sync.Once
	reg     *protocol.Registry

	shareOnce sync.Once // builds shr
	shr       *shareState

	sessOnce sync.Once
	sessions *FetchSessions // consumer fetch sessions; see fetchSessions

	pidMu   sync.Mutex // guards pidNext, pidEnd
	pidNext int64
	pidEnd  int64
}

type handlerFunc func(b *Broker, r *protocol.Request) protocol.Reply

type entry struct {
	key, min, max int16
	fn            handlerFunc
}

var handlers = map[int16]entry{}

// reg registers a handler for an API key and its version range. Each handler
// file calls it from init; a duplicate is a programming error.
func reg(key, min, max int16, fn handlerFunc) {
	if _, dup := handlers[key]; dup {
		panic(fmt.Sprintf("api: key %d registered twice", key))
	}
	handlers[key] = entry{key, min, max, fn}
}

// Registry returns the protocol registry with every handler bound to b.
func (b *Broker) Registry() *protocol.Registry {
	b.regOnce.Do(func() { b.reg = b.buildRegistry() })
	return b.reg
}

func (b *Broker) registry() *protocol.Registry { return b.Registry() }

func (b *Broker) buildRegistry() *protocol.Registry {
	r := protocol.NewRegistry()
	for _, e := range handlers {
		e := e
		r.Add(protocol.API{Key: e.key, Min: e.min, Max: e.max, Handle: func(req *protocol.Request) protocol.Reply {
			return e.fn(b, req)
		}})
	}
	return r
}

// ctx returns a context bounded by timeoutMs (or a default) and the broker's life.
func (b *Broker) ctx(timeoutMs int32) (context.Context, context.CancelFunc) {
	d := time.Duration(timeoutMs) * time.Millisecond
	if d <= 0 || d > 5*time.Minute {
		d = 30 * time.Second
	}
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

// adminCtx is ctx for a metadata write that serves r: it carries r's
// principal, which a write forwarded to the active controller takes along
// (the controller refuses admin records without one).
func (b *Broker) adminCtx(r *protocol.Request, timeoutMs int32) (context.Context, context.CancelFunc) {
	ctx, cancel := b.ctx(timeoutMs)
	if r.Conn == nil {
		return ctx, cancel
	}
	return controller.WithPrincipal(ctx, r.Conn.Principal()), cancel
}
