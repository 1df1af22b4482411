package api

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/replication"
)

// Peers holds this broker's clients for the requests it sends to other
// brokers outside replication: transaction markers to partition leaders
// (WriteTxnMarkers) and transaction verification to coordinators
// (AddPartitionsToTxn v4+). One client is kept per peer broker and channel,
// and redialed when the peer's inter-broker address changes.
type Peers struct {
	dial    replication.Dialer
	timeout time.Duration

	mu      sync.Mutex // guards clients and closed
	clients map[peerKey]*peer
	closed  bool
}

// peerChannel keeps the transaction markers a coordinator writes off the
// connection that carries verifications (AddPartitionsToTxn), which may wait
// for a transaction coordinator's lock. A broker serves one connection's
// requests in order, so on a shared connection two coordinators, each
// writing a marker to the other while holding its lock, deadlocked until
// the request timeout: each marker waited behind a verification that waited
// for the other's lock. Kafka, too, sends markers and verifications on
// clients of their own (TxnMarkerChannelManager, AddPartitionsToTxnManager).
type peerChannel int8

const (
	channelVerify peerChannel = iota
	channelMarkers
	// channelShareState carries share-partition state written to and read
	// from a remote __share_group_state leader, which must not queue
	// behind either of the others.
	channelShareState
)

type peerKey struct {
	id      int32
	channel peerChannel
}

type peer struct {
	addr  string
	cl    replication.Client
	close func()
}

// errPeersClosed is returned once the broker has shut its peer clients.
var errPeersClosed = errors.New("api: inter-broker clients are closed")

// NewPeers returns the peer clients of a broker. dial opens a client for an
// address (replication.KgoDialer with the inter-broker listener's TLS and
// SASL options); timeout bounds each request, 5 s when not positive.
func NewPeers(dial replication.Dialer, timeout time.Duration) *Peers {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &Peers{dial: dial, timeout: timeout, clients: map[peerKey]*peer{}}
}

// client returns the cached client of broker id at addr for a channel,
// dialing it when there is none or the address changed.
func (ps *Peers) client(id int32, addr string, channel peerChannel) (replication.Client, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil, errPeersClosed
	}
	key := peerKey{id, channel}
	if p, ok := ps.clients[key]; ok {
		if p.addr == addr {
			return p.cl, nil
		}
		p.close()
		delete(ps.clients, key)
	}
	cl, closeFn, err := ps.dial(addr)
	if err != nil {
		return nil, fmt.Errorf("api: broker %d at %s: %w", id, addr, err)
	}
	ps.clients[key] = &peer{addr: addr, cl: cl, close: closeFn}
	return cl, nil
}

// Close closes every peer client; later requests fail.
func (ps *Peers) Close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.closed = true
	for id, p := range ps.clients {
		p.close()
		delete(ps.clients, id)
	}
}

// withPeer calls send with the client of broker id on its inter-broker
// listener and a context bounded by the peer timeout and the broker's life.
func (b *Broker) withPeer(id int32, channel peerChannel, send func(ctx context.Context, cl kmsg.Requestor) error) error {
	if b.Peers == nil {
		return fmt.Errorf("api: broker %d: this broker has no inter-broker clients", id)
	}
	addr := b.replicaAddr(b.Controller.Image(), id)
	if addr == "" {
		return fmt.Errorf("api: broker %d has no inter-broker address", id)
	}
	cl, err := b.Peers.client(id, addr, channel)
	if err != nil {
		return err
	}
	ctx, cancel := b.ctx(int32(b.Peers.timeout / time.Millisecond))
	defer cancel()
	if err := send(ctx, cl); err != nil {
		return fmt.Errorf("api: broker %d at %s: %w", id, addr, err)
	}
	return nil
}
