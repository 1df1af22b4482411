package protocol

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConnInfo describes a client connection to handlers.
type ConnInfo struct {
	ID       uint64
	Remote   net.Addr
	Local    net.Addr
	Listener string
}

// Server accepts Kafka connections and serves them with a Registry.
type Server struct {
	Registry *Registry
	// Name is the listener's name, for logs and metrics.
	Name string
	// MaxRequestBytes caps a frame; larger sizes close the connection before
	// anything is allocated.
	MaxRequestBytes int32
	// MaxConnections caps concurrent connections; 0 is unlimited.
	MaxConnections int
	// MaxInFlight is how many requests of one connection may be waiting for
	// their responses before the server stops reading from it.
	MaxInFlight int
	Logger      *slog.Logger
	Metrics     *Metrics

	nextID atomic.Uint64
	open   atomic.Int64

	mu    sync.Mutex // guards conns
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// Serve accepts connections until ctx is cancelled or the listener fails. It
// closes open connections and waits for them before returning.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.MaxInFlight <= 0 {
		s.MaxInFlight = 64
	}
	s.mu.Lock()
	s.conns = map[net.Conn]struct{}{}
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var err error
	for {
		var c net.Conn
		c, err = ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			break
		}
		if s.MaxConnections > 0 && s.open.Load() >= int64(s.MaxConnections) {
			s.Logger.Warn("connection refused: limit reached", "remote", c.RemoteAddr(), "limit", s.MaxConnections)
			c.Close()
			continue
		}
		s.track(c, true)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.track(c, false)
			s.serveConn(ctx, c)
		}()
	}
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (s *Server) track(c net.Conn, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		s.conns[c] = struct{}{}
		s.open.Add(1)
		s.Metrics.connOpened()
	} else {
		delete(s.conns, c)
		s.open.Add(-1)
		s.Metrics.connClosed()
	}
}

// pending is one request waiting for its response to be written.
type pending struct {
	hdr   Header
	reply Reply
	start time.Time
}

func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	info := &ConnInfo{ID: s.nextID.Add(1), Remote: c.RemoteAddr(), Local: c.LocalAddr(), Listener: s.Name}
	log := s.Logger.With("conn", info.ID, "remote", info.Remote.String())
	queue := make(chan pending, s.MaxInFlight)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		s.writeLoop(c, queue, log)
	}()
	defer func() {
		close(queue)
		<-writerDone
		c.Close()
	}()

	br := bufio.NewReaderSize(c, 64<<10)
	for ctx.Err() == nil {
		// Each frame gets its own buffer: decoded requests point into it
		// (produce batches, group metadata) and may outlive the loop turn.
		frame, err := ReadFrame(br, s.MaxRequestBytes, nil)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				log.Warn("closing connection", "err", err)
			}
			return
		}
		s.Metrics.bytesIn(len(frame) + 4)
		start := time.Now()
		hdr, req, err := ParseRequest(s.Registry, frame)
		if err != nil {
			s.Metrics.requestError(hdr.Key)
			log.Warn("closing connection after a bad request", "api_key", hdr.Key, "version", hdr.Version,
				"correlation_id", hdr.CorrelationID, "client_id", hdr.ClientID, "err", err)
			return
		}
		api, _ := s.Registry.Lookup(hdr.Key)
		reply := s.handle(api, &Request{Key: hdr.Key, Version: hdr.Version, CorrelationID: hdr.CorrelationID,
			ClientID: hdr.ClientID, Msg: req, Conn: info}, log)
		if reply.None {
			s.Metrics.observe(hdr.Key, time.Since(start))
			if reply.Close {
				return
			}
			continue
		}
		queue <- pending{hdr: hdr, reply: reply, start: start}
		if reply.Close {
			return
		}
	}
}

// handle runs a handler, turning a panic into a closed connection instead of
// a dead broker.
func (s *Server) handle(api API, r *Request, log *slog.Logger) (reply Reply) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("handler panic; closing connection", "api", kmsg.NameForKey(r.Key), "version", r.Version, "panic", p)
			reply = Reply{None: true, Close: true}
		}
	}()
	return api.Handle(r)
}

func (s *Server) writeLoop(c net.Conn, queue <-chan pending, log *slog.Logger) {
	var out []byte
	failed := false
	for p := range queue {
		if failed {
			continue // drain so the reader never blocks
		}
		resp := p.reply.Resp
		if p.reply.Later != nil {
			var panicked bool
			resp, panicked = s.later(p, log)
			if panicked {
				p.reply.Close = true
			}
		}
		if resp == nil {
			if p.reply.Close {
				c.Close()
			}
			continue
		}
		out = AppendResponse(out[:0], p.hdr.CorrelationID, resp)
		// Counted before the write, so a client that has its answer can
		// already see it in the metrics.
		s.Metrics.observe(p.hdr.Key, time.Since(p.start))
		if _, err := c.Write(out); err != nil {
			failed = true
			c.Close()
			continue
		}
		s.Metrics.bytesOut(len(out))
		if cap(out) > 1<<20 {
			out = nil
		}
		if p.reply.Close {
			c.Close()
			failed = true
		}
	}
}

func (s *Server) later(p pending, log *slog.Logger) (resp kmsg.Response, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("handler panic; closing connection", "api", kmsg.NameForKey(p.hdr.Key), "panic", r)
			resp, panicked = nil, true
		}
	}()
	return p.reply.Later(), false
}
