package controller

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gregorbroker/gregor/core/protocol"
)

// raftMagic opens every raft connection on the controller listener. A
// Kafka frame opens with its big-endian size, whose first byte is below
// 0x80 for any valid size, so the two never collide.
const raftMagic byte = 0xD2

// muxPeekTimeout bounds how long an accepted connection may take to send
// its first byte.
const muxPeekTimeout = 10 * time.Second

var errMuxClosed = errors.New("controller: listener closed")

// mux splits the controller listener: raft connections go to raft's
// network transport, everything else is a Kafka-framed controller RPC
// connection.
type mux struct {
	ln        net.Listener
	advertise net.Addr
	log       *slog.Logger
	raftConns chan net.Conn
	rpcConns  chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
	// sec secures every connection before its first byte is routed; nil
	// is PLAINTEXT. Only superUsers are admitted then.
	sec        PeerSecurity
	superUsers []string
	refusals   refusalLog

	mu    sync.Mutex // guards conns
	conns map[net.Conn]struct{}
}

func newMux(ln net.Listener, advertise string, log *slog.Logger, sec PeerSecurity, superUsers []string) (*mux, error) {
	addr := ln.Addr()
	if advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", advertise)
		if err != nil {
			return nil, fmt.Errorf("controller: advertised address %q: %w", advertise, err)
		}
		addr = a
	}
	if ta, ok := addr.(*net.TCPAddr); ok && (ta.IP == nil || ta.IP.IsUnspecified()) {
		return nil, fmt.Errorf("controller: the controller listener %s is a wildcard address; set an advertised address", addr)
	}
	m := &mux{
		ln: ln, advertise: addr, log: log, sec: sec, superUsers: superUsers,
		raftConns: make(chan net.Conn),
		rpcConns:  make(chan net.Conn),
		closed:    make(chan struct{}),
		conns:     map[net.Conn]struct{}{},
	}
	go m.acceptLoop()
	return m, nil
}

func (m *mux) acceptLoop() {
	var backoff time.Duration
	for {
		conn, err := m.ln.Accept()
		if err != nil {
			select {
			case <-m.closed:
				return
			default:
			}
			if protocol.AcceptRetryable(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				m.log.Warn("controller accept failed; retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			m.log.Warn("controller listener stopped", "err", err)
			m.Close()
			return
		}
		backoff = 0
		go m.route(conn)
	}
}

// route reads a connection's first byte and hands it on.
func (m *mux) route(conn net.Conn) {
	if !m.track(conn) {
		conn.Close()
		return
	}
	sc := m.admit(conn)
	if sc == nil {
		m.untrack(conn)
		conn.Close()
		return
	}
	br := bufio.NewReader(sc)
	sc.SetReadDeadline(time.Now().Add(muxPeekTimeout))
	first, err := br.Peek(1)
	sc.SetReadDeadline(time.Time{})
	if err != nil {
		m.untrack(conn)
		conn.Close()
		return
	}
	target := m.rpcConns
	if first[0] == raftMagic {
		br.Discard(1)
		target = m.raftConns
	}
	wrapped := &bufferedConn{Conn: sc, raw: conn, r: br, m: m}
	select {
	case target <- wrapped:
	case <-m.closed:
		conn.Close()
	}
}

func (m *mux) track(c net.Conn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conns == nil {
		return false
	}
	m.conns[c] = struct{}{}
	return true
}

func (m *mux) untrack(c net.Conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.conns, c)
}

// Close stops accepting and closes every accepted connection.
func (m *mux) Close() error {
	m.closeOnce.Do(func() {
		close(m.closed)
		m.ln.Close()
		m.mu.Lock()
		for c := range m.conns {
			c.Close()
		}
		m.conns = nil
		m.mu.Unlock()
	})
	return nil
}

// acceptRPC returns the next controller RPC connection.
func (m *mux) acceptRPC() (net.Conn, error) {
	select {
	case c := <-m.rpcConns:
		return c, nil
	case <-m.closed:
		return nil, errMuxClosed
	}
}

// raftStream is raft's view of the mux.
func (m *mux) raftStream() raft.StreamLayer { return &raftStream{m: m} }

type raftStream struct{ m *mux }

func (s *raftStream) Accept() (net.Conn, error) {
	select {
	case c := <-s.m.raftConns:
		return c, nil
	case <-s.m.closed:
		return nil, errMuxClosed
	}
}

func (s *raftStream) Close() error { return s.m.Close() }

func (s *raftStream) Addr() net.Addr { return s.m.advertise }

func (s *raftStream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", string(address), timeout)
	if err != nil {
		return nil, err
	}
	if s.m.sec != nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		conn, err = secureDial(ctx, s.m.sec, conn, string(address))
		cancel()
		if err != nil {
			return nil, err
		}
	}
	conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := conn.Write([]byte{raftMagic}); err != nil {
		conn.Close()
		return nil, err
	}
	conn.SetWriteDeadline(time.Time{})
	return conn, nil
}

// bufferedConn reads through the reader that peeked at the first byte.
type bufferedConn struct {
	net.Conn
	raw net.Conn // the accepted connection, as tracked
	r   *bufio.Reader
	m   *mux
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *bufferedConn) Close() error {
	c.m.untrack(c.raw)
	return c.Conn.Close()
}
