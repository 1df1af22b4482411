package controller

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// PeerSecurity secures the controller listener, on which Raft and the
// controller RPCs travel. The controller runs Accept on every accepted
// connection before it reads a byte of Raft or of a controller RPC, and
// admits the peer only when the principal returned is one of
// Config.SuperUsers; it runs Dial on every connection it opens to a peer.
// The implementation (TLS, a SASL exchange) belongs to the caller, which
// owns certificates and credentials.
type PeerSecurity interface {
	// Accept runs the server side of the handshake and returns the
	// connection to read through and the peer's principal ("User:name").
	// ctx bounds the handshake.
	Accept(ctx context.Context, conn net.Conn) (net.Conn, string, error)
	// Dial runs the client side of the handshake on a connection opened
	// to addr and returns the connection to use.
	Dial(ctx context.Context, conn net.Conn, addr string) (net.Conn, error)
}

// principalKey carries, in a context, the principal of the client whose
// request a metadata write serves.
type principalKey struct{}

// WithPrincipal marks ctx as serving a request of principal, which the
// protocol layer has authorized. A write that must be forwarded to the
// active controller carries it there.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

func principalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// ownBehalf lists the record kinds a broker may forward without a client
// principal: it creates internal topics (and auto-created ones) itself.
// Every other forwarded record is an admin change that some client asked
// for and a broker authorized.
var ownBehalf = []string{typeCreateTopic}

// checkForwardedKind refuses a record kind a peer may not forward, or may
// forward only for an authorized client's request.
func checkForwardedKind(kind, principal string) error {
	switch kind {
	case typeController, typeRegisterBroker, typeBrokerState, typePlan:
		return fmt.Errorf("controller: forwarded %s record: %w: not accepted from a peer", kind, ErrInvalidRequest)
	}
	if principal == "" && !slices.Contains(ownBehalf, kind) {
		return fmt.Errorf("controller: forwarded %s record: %w: it carries no client principal, and a broker may not make this change on its own behalf",
			kind, ErrClusterAuthorization)
	}
	return nil
}

// secureDial runs sec's client handshake on conn within ctx's deadline;
// conn is closed when it fails.
func secureDial(ctx context.Context, sec PeerSecurity, conn net.Conn, addr string) (net.Conn, error) {
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	sc, err := sec.Dial(ctx, conn, addr)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("controller: securing the connection to %s: %w", addr, err)
	}
	conn.SetDeadline(time.Time{})
	return sc, nil
}

// admit runs the server side of the handshake on an accepted connection;
// it returns nil when the peer is refused (and logged).
func (m *mux) admit(conn net.Conn) net.Conn {
	if m.sec == nil {
		return conn
	}
	ctx, cancel := context.WithTimeout(context.Background(), muxPeekTimeout)
	defer cancel()
	deadline := time.Now().Add(muxPeekTimeout)
	conn.SetDeadline(deadline)
	hc := &handshakeConn{Conn: conn, deadline: deadline}
	sc, principal, err := m.sec.Accept(ctx, hc)
	hc.finish()
	if err != nil {
		m.refusals.log(m.log, "controller listener refused a peer: handshake failed", "remote", conn.RemoteAddr(), "err", err)
		return nil
	}
	if !slices.Contains(m.superUsers, principal) {
		m.refusals.log(m.log, "controller listener refused a peer: not a super user", "remote", conn.RemoteAddr(), "principal", principal)
		return nil
	}
	conn.SetDeadline(time.Time{})
	return sc
}

// refusalLog logs refused peers, at most refusalsPerSecond a second, so a
// flood of strangers cannot flood the log; the next line logged says how
// many were left out.
type refusalLog struct {
	mu         sync.Mutex // guards the fields below
	second     time.Time
	logged     int
	suppressed int
}

const refusalsPerSecond = 10

func (r *refusalLog) log(l *slog.Logger, msg string, args ...any) {
	r.mu.Lock()
	now := time.Now()
	if now.Sub(r.second) >= time.Second {
		r.second, r.logged = now, 0
	}
	if r.logged >= refusalsPerSecond {
		r.suppressed++
		r.mu.Unlock()
		return
	}
	r.logged++
	if r.suppressed > 0 {
		args = append(args, "refusals_not_logged", r.suppressed)
		r.suppressed = 0
	}
	r.mu.Unlock()
	l.Warn(msg, args...)
}

// handshakeSlots bounds the CPU the controller listener spends on
// handshakes (a TLS key exchange and signature, verifying a client's
// certificate chain, a SASL exchange): at most a quarter of the CPUs' time
// (at least half of one CPU). Unbounded, strangers opening connection
// after connection to the controller listeners take every core from the
// clients already connected. A handshake holds one of half the CPUs'
// slots (at least one) only while it computes, never while it waits for
// the peer's next bytes, so a stranger that sends nothing holds none; it
// holds the slot for as long again after each step, and waits for a slot
// on its own connection, within the handshake's deadline.
var handshakeSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

// handshakeConn meters a handshake's computing between reads with
// handshakeSlots. After finish it reads and writes as the connection.
type handshakeConn struct {
	net.Conn
	deadline time.Time
	done     atomic.Bool
	// held and start are used by the handshake's goroutine only.
	held  bool
	start time.Time
}

func (c *handshakeConn) Read(p []byte) (int, error) {
	if c.done.Load() {
		return c.Conn.Read(p)
	}
	c.release()
	n, err := c.Conn.Read(p)
	if err == nil {
		err = c.acquire()
	}
	return n, err
}

// acquire waits for a slot until the handshake's deadline.
func (c *handshakeConn) acquire() error {
	t := time.NewTimer(time.Until(c.deadline))
	defer t.Stop()
	select {
	case handshakeSlots <- struct{}{}:
		c.held, c.start = true, time.Now()
		return nil
	case <-t.C:
		return fmt.Errorf("controller: waiting for a handshake slot: %w", os.ErrDeadlineExceeded)
	}
}

// release gives the slot back after as long again as it was held.
func (c *handshakeConn) release() {
	if !c.held {
		return
	}
	c.held = false
	time.AfterFunc(time.Since(c.start), func() { <-handshakeSlots })
}

// finish ends the metering when the handshake is done.
func (c *handshakeConn) finish() {
	c.release()
	c.done.Store(true)
}
