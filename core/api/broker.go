package api

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/fetchsession"
	"github.com/gregorbroker/gregor/core/httpapi"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/replication"
	"github.com/gregorbroker/gregor/core/share"
	"github.com/gregorbroker/gregor/core/share/coordinator"
	"github.com/gregorbroker/gregor/core/telemetry"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// Broker is what the handlers reach: the hosted partitions and their
// lifecycle (core/broker, whose Config, Controller, Partitions, Groups,
// Txns and Extensions the handlers use directly), and the request-side
// state of this package.
type Broker struct {
	*broker.Broker
	// Security authenticates SASL clients and authorizes requests.
	Security Security
	// ISR changes the ISR of the partitions led here; nil never changes it.
	ISR *replication.ISR
	// ProducerIDs hands out producer ids from blocks the controller
	// reserves; nil answers InitProducerID with COORDINATOR_NOT_AVAILABLE.
	ProducerIDs *txn.ProducerIDs
	// Telemetry keeps the client metrics pushed with KIP-714; nil answers
	// the telemetry APIs as a broker without client-metrics support.
	Telemetry *telemetry.Store

	regOnce sync.Once
	reg     *protocol.Registry

	shareOnce sync.Once // builds shr
	shr       *coordinator.Coordinator

	sessOnce sync.Once
	sessions *fetchsession.Cache // consumer fetch sessions; see fetchSessions
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
	return b.RequestContext(d)
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

// AdminView is the broker's read-only view for the admin API and the
// console: the owners the Kafka handlers ask, seen through httpapi.
func (b *Broker) AdminView() *httpapi.BrokerView {
	return &httpapi.BrokerView{
		Config: b.Config, Controller: b.Controller, Partitions: b.Partitions,
		Partition:        b.Partition,
		TopicConfig:      b.TopicConfig,
		PartitionConfig:  b.TopicPartitionConfig,
		GroupCoordinator: b.Groups, ExtensionSet: b.Extensions, Share: b.share,
		Authorizer: func() sdkauth.Authorizer {
			if b.Security.Authorizer == nil {
				return nil
			}
			b.syncACLs()
			return b.Security.Authorizer
		},
		Logger: b.Logger,
	}
}

// HTTPAuthenticator authenticates admin API requests with the Kafka
// listeners' SASL mechanisms and the image's SCRAM credentials.
func (b *Broker) HTTPAuthenticator() httpapi.SASLAuthenticator {
	return httpapi.SASLAuthenticator{Mechanisms: b.Security.Mechanisms, Credentials: ImageCredentials{Controller: b.Controller}}
}

// MetricsCollector returns the broker's Prometheus collector.
func (b *Broker) MetricsCollector() *httpapi.MetricsCollector {
	return &httpapi.MetricsCollector{View: b.AdminView(),
		ShareTotals:   func() share.Stats { return b.share().Partitions().Totals() },
		FetchSessions: func() fetchsession.Stats { return b.fetchSessions().Stats() }}
}

// share returns the broker's share groups, built on first use.
func (b *Broker) share() *coordinator.Coordinator {
	b.shareOnce.Do(func() {
		b.shr = coordinator.New(coordinator.Config{NodeID: b.Config.NodeID, Groups: b.Config.Groups,
			Fsync: b.Config.Log.Durability == config.DurabilityFsync, Logger: b.Logger, Now: b.now}, shareBroker{b})
	})
	return b.shr
}

func (b *Broker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// shareBroker is what share groups reach of the broker.
type shareBroker struct{ b *Broker }

func (s shareBroker) Partition(topic string, index int32) (*partition.Partition, bool) {
	return s.b.Partition(topic, index)
}

func (s shareBroker) Image() *controller.Image { return s.b.Controller.Image() }

func (s shareBroker) EnsureInternalTopic(name string, partitions int32, rf int16, configFor func(int16) map[string]string) (*controller.Topic, error) {
	ctx, cancel := s.b.ctx(0)
	defer cancel()
	return s.b.EnsureInternalTopic(ctx, broker.InternalTopic{Name: name, Partitions: partitions, ReplicationFactor: rf,
		ConfigFor: configFor, Unavailable: coordinator.ErrCoordinatorNotAvailable})
}

func (s shareBroker) GroupPartition(group string) *partition.Partition {
	if s.b.Groups == nil {
		return nil
	}
	return s.b.Groups.Partition(group)
}

func (s shareBroker) Send(id int32, req kmsg.Request) (resp kmsg.Response, err error) {
	err = s.b.SendPeer(id, replication.ChannelShareState, func(ctx context.Context, cl kmsg.Requestor) error {
		resp, err = cl.Request(ctx, req)
		return err
	})
	return resp, err
}
