package replication

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Peers holds a broker's clients for the requests it sends to other brokers
// outside replication: transaction markers to partition leaders
// (WriteTxnMarkers), transaction verification to coordinators
// (AddPartitionsToTxn v4+) and share-partition state to the leaders of
// __share_group_state. One client is kept per peer broker and channel, and
// redialed when the peer's inter-broker address changes.
type Peers struct {
	dial    Dialer
	timeout time.Duration

	mu      sync.Mutex // guards clients and closed
	clients map[peerKey]*peer
	closed  bool
}

// Channel keeps the transaction markers a coordinator writes off the
// connection that carries verifications (AddPartitionsToTxn), which may wait
// for a transaction coordinator's lock. A broker serves one connection's
// requests in order, so on a shared connection two coordinators, each
// writing a marker to the other while holding its lock, deadlocked until
// the request timeout: each marker waited behind a verification that waited
// for the other's lock. Kafka, too, sends markers and verifications on
// clients of their own (TxnMarkerChannelManager, AddPartitionsToTxnManager).
type Channel int8

const (
	ChannelVerify Channel = iota
	ChannelMarkers
	// ChannelShareState carries share-partition state written to and read
	// from a remote __share_group_state leader, which must not queue
	// behind either of the others.
	ChannelShareState
)

type peerKey struct {
	id      int32
	channel Channel
}

type peer struct {
	addr  string
	cl    Client
	close func()
}

// ErrPeersClosed is returned once the broker has shut its peer clients.
var ErrPeersClosed = errors.New("replication: inter-broker clients are closed")

// NewPeers returns the peer clients of a broker. dial opens a client for an
// address (KgoDialer with the inter-broker listener's TLS and SASL options);
// timeout bounds each request, 5 s when not positive.
func NewPeers(dial Dialer, timeout time.Duration) *Peers {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &Peers{dial: dial, timeout: timeout, clients: map[peerKey]*peer{}}
}

// client returns the cached client of broker id at addr for a channel,
// dialing it when there is none or the address changed.
func (ps *Peers) client(id int32, addr string, channel Channel) (Client, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil, ErrPeersClosed
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
		return nil, fmt.Errorf("replication: broker %d at %s: %w", id, addr, err)
	}
	ps.clients[key] = &peer{addr: addr, cl: cl, close: closeFn}
	return cl, nil
}

// Send calls send with the client of broker id at addr (its inter-broker
// address) for a channel, under ctx further bounded by the peer timeout.
func (ps *Peers) Send(ctx context.Context, id int32, addr string, channel Channel, send func(ctx context.Context, cl kmsg.Requestor) error) error {
	if addr == "" {
		return fmt.Errorf("replication: broker %d has no inter-broker address", id)
	}
	cl, err := ps.client(id, addr, channel)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, ps.timeout)
	defer cancel()
	if err := send(ctx, cl); err != nil {
		return fmt.Errorf("replication: broker %d at %s: %w", id, addr, err)
	}
	return nil
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
