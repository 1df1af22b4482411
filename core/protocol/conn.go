package protocol

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

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

	// Security is the listener's protocol; empty means PLAINTEXT.
	Security SecurityProtocol
	// TLS serves SSL and SASL_SSL listeners. Certificates are reloaded
	// through its GetCertificate or GetConfigForClient callbacks.
	TLS *tls.Config
	// TLSPrincipal maps a verified client certificate to a principal on
	// SSL listeners. Without it, or without a client certificate, the
	// principal is User:ANONYMOUS.
	TLSPrincipal func(*tls.ConnectionState) (string, error)
	// MaxPreAuthBytes caps frames until the connection has authenticated;
	// 0 means DefaultMaxPreAuthBytes.
	MaxPreAuthBytes int32
	// IdleTimeout closes a connection that sent nothing for this long
	// while no response was pending; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// HandshakeTimeout bounds the TLS handshake; 0 means 10 seconds.
	HandshakeTimeout time.Duration
	// FailedAuthDelay delays the reply to a failed authentication before
	// the connection closes; 0 means DefaultFailedAuthDelay, negative none.
	FailedAuthDelay time.Duration
	// MaxConnectionsPerIP caps concurrent connections from one address;
	// 0 is unlimited.
	MaxConnectionsPerIP int
	// Limiter, shared by a broker's listeners, bounds connections across
	// all of them (total, per address, creation rate); nil is none.
	Limiter *ConnLimiter
	// MaxQueuedResponseBytes bounds the encoded response bytes one
	// connection may have waiting to be written; at the bound nothing more
	// is read from it. 0 means DefaultMaxQueuedResponseBytes.
	MaxQueuedResponseBytes int64
	// RequestBytes, shared by a broker's listeners, bounds the bytes of
	// requests read and not yet answered (queued.max.request.bytes); nil
	// is none.
	RequestBytes *ByteBudget
	// RequestQuota throttles clients for the time their requests take;
	// nil is none.
	RequestQuota RequestQuota
	// Now and After are the clock; nil means the wall clock.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time

	nextID atomic.Uint64
	open   atomic.Int64

	mu    sync.Mutex // guards conns and perIP
	conns map[net.Conn]struct{}
	perIP map[string]int
	wg    sync.WaitGroup
}

func (s *Server) defaults() {
	if s.MaxInFlight <= 0 {
		s.MaxInFlight = 64
	}
	if s.Security == "" {
		s.Security = Plaintext
	}
	if s.MaxPreAuthBytes <= 0 {
		s.MaxPreAuthBytes = DefaultMaxPreAuthBytes
	}
	if s.IdleTimeout <= 0 {
		s.IdleTimeout = DefaultIdleTimeout
	}
	if s.MaxQueuedResponseBytes <= 0 {
		s.MaxQueuedResponseBytes = DefaultMaxQueuedResponseBytes
	}
	if s.HandshakeTimeout <= 0 {
		s.HandshakeTimeout = 10 * time.Second
	}
	if s.FailedAuthDelay == 0 {
		s.FailedAuthDelay = DefaultFailedAuthDelay
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.After == nil {
		s.After = time.After
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
}

// Serve accepts connections until ctx is cancelled or the listener fails. It
// closes open connections and waits for them before returning.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.defaults()
	if s.Security.UsesTLS() && s.TLS == nil {
		return fmt.Errorf("protocol: listener %s: %s needs a TLS configuration", s.Name, s.Security)
	}
	s.mu.Lock()
	s.conns = map[net.Conn]struct{}{}
	s.perIP = map[string]int{}
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var err error
	var backoff time.Duration
	for {
		var c net.Conn
		c, err = ln.Accept()
		if err != nil {
			if ctx.Err() == nil && AcceptRetryable(err) {
				backoff = acceptBackoff(backoff)
				s.Logger.Warn("accept failed; retrying", "listener", s.Name, "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			break
		}
		backoff = 0
		if s.MaxConnections > 0 && s.open.Load() >= int64(s.MaxConnections) {
			s.Logger.Warn("connection refused: limit reached", "remote", c.RemoteAddr(), "limit", s.MaxConnections)
			s.Metrics.connRefused()
			c.Close()
			continue
		}
		ip := remoteIP(c.RemoteAddr())
		if why := s.Limiter.Admit(ip); why != "" {
			s.Logger.Warn("connection refused", "remote", c.RemoteAddr(), "reason", string(why))
			s.Metrics.connRefused()
			c.Close()
			continue
		}
		if !s.track(c, true) {
			s.Logger.Warn("connection refused: per-address limit reached", "remote", c.RemoteAddr(), "limit", s.MaxConnectionsPerIP)
			s.Metrics.connRefused()
			s.Limiter.Release(ip)
			c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.Limiter.Release(ip)
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

// track adds or removes a connection; adding fails when the remote address
// has reached MaxConnectionsPerIP.
func (s *Server) track(c net.Conn, add bool) bool {
	ip := remoteIP(c.RemoteAddr())
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.MaxConnectionsPerIP > 0 && s.perIP[ip] >= s.MaxConnectionsPerIP {
			return false
		}
		s.perIP[ip]++
		s.conns[c] = struct{}{}
		s.open.Add(1)
		s.Metrics.connOpened()
	} else {
		if s.perIP[ip]--; s.perIP[ip] <= 0 {
			delete(s.perIP, ip)
		}
		delete(s.conns, c)
		s.open.Add(-1)
		s.Metrics.connClosed()
	}
	return true
}

func remoteIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// pending is one request waiting for its response to be written.
type pending struct {
	hdr   Header
	reply Reply
	start time.Time
	// raw, when set, is a SaslHandshake v0 token written with only a size.
	raw []byte
	// delay holds the response back (a failed authentication).
	delay time.Duration
	// enc is the response already encoded, counted in the connection's
	// queued response bytes until it is written.
	enc []byte
	// encBuf is enc's pooled buffer, returned once it is written.
	encBuf *[]byte
	// queued is what enc counts in the connection's queued response bytes:
	// its length and the file bytes it sends.
	queued int64
	// reqBytes is the request frame's size, counted in RequestBytes until
	// the response is written.
	reqBytes int64
}

func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	info := &ConnInfo{ID: s.nextID.Add(1), Remote: c.RemoteAddr(), Local: c.LocalAddr(), Listener: s.Name, Security: s.Security}
	log := s.Logger.With("conn", info.ID, "remote", info.Remote.String())
	if s.Security.UsesTLS() {
		tc, err := s.handshake(ctx, c, info)
		if err != nil {
			log.Warn("closing connection", "err", err)
			c.Close()
			return
		}
		c = tc
	}
	if !s.Security.UsesSASL() {
		principal := AnonymousPrincipal
		if s.Security == SSL && s.TLSPrincipal != nil && len(info.TLS.PeerCertificates) > 0 {
			p, err := s.TLSPrincipal(info.TLS)
			if err != nil {
				s.Metrics.authFailed()
				log.Warn("closing connection: client certificate maps to no principal", "err", err)
				c.Close()
				return
			}
			principal = p
		}
		info.Authenticate(principal, time.Time{})
	}
	queue := make(chan pending, s.MaxInFlight)
	var inFlight atomic.Int64
	queued := &ByteBudget{Max: s.MaxQueuedResponseBytes}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		s.writeLoop(c, queue, &inFlight, queued, log)
	}()
	defer func() {
		close(queue)
		<-writerDone
		c.Close()
		info.markClosed()
	}()
	enqueue := func(p pending) {
		if p.reply.Resp != nil && p.reply.Later == nil {
			// Encoded now, so that the bytes waiting for the client are
			// known exactly and bound the connection.
			p.encBuf = getRespBuf()
			p.enc = AppendResponse((*p.encBuf)[:0], p.hdr.CorrelationID, p.reply.Resp)
			p.reply.Resp = nil
			// File bytes count as well: they wait for the client just
			// the same, and each run holds a descriptor until written
			// (so it counts at least minRunCharge).
			p.queued = int64(len(p.enc) + p.reply.Splice.QueuedBytes())
			queued.add(p.queued)
			s.Metrics.queuedResponseBytes(p.queued)
		}
		inFlight.Add(1)
		queue <- p
	}

	br := bufio.NewReaderSize(c, 64<<10)
	for ctx.Err() == nil {
		// Muted while the client leaves its responses unread, or while
		// the broker holds queued_max_request_bytes of requests.
		if !waitBelow(ctx, s.Metrics, queued, s.RequestBytes) {
			return
		}
		if err := s.awaitFrame(c, br, &inFlight); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				log.Warn("closing connection", "err", err)
			}
			return
		}
		// The rest of the frame must arrive within the idle timeout too.
		c.SetReadDeadline(time.Now().Add(s.IdleTimeout))
		limit := info.frameLimit(s.MaxRequestBytes, s.MaxPreAuthBytes)
		if raw := info.rawAuth(); raw != nil {
			p, ok := s.rawToken(br, limit, info, raw, log)
			if p.raw != nil || p.reply.Close {
				enqueue(p)
			}
			if !ok {
				return
			}
			continue
		}
		// Each frame gets its own buffer: decoded requests point into it
		// (produce batches, group metadata) and may outlive the loop turn.
		frame, err := ReadFrame(br, limit, nil)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				log.Warn("closing connection", "err", err, "authenticated", info.Authenticated())
			}
			return
		}
		s.Metrics.bytesIn(len(frame) + 4)
		reqBytes := int64(len(frame) + 4)
		s.RequestBytes.add(reqBytes)
		s.Metrics.queuedRequestBytes(reqBytes)
		start := time.Now()
		key := int16(binary.BigEndian.Uint16(frame))
		if err := info.admits(key, s.Now()); err != nil {
			s.releaseRequest(reqBytes)
			s.Metrics.requestError(key)
			log.Warn("closing connection", "api_key", key, "err", err)
			return
		}
		hdr, req, err := ParseRequest(s.Registry, frame)
		if err != nil {
			s.releaseRequest(reqBytes)
			s.Metrics.requestError(hdr.Key)
			log.Warn("closing connection after a bad request", "api_key", hdr.Key, "version", hdr.Version,
				"correlation_id", hdr.CorrelationID, "client_id", hdr.ClientID, "err", err)
			return
		}
		api, _ := s.Registry.Lookup(hdr.Key)
		r := &Request{Key: hdr.Key, Version: hdr.Version, CorrelationID: hdr.CorrelationID,
			ClientID: hdr.ClientID, Msg: req, Conn: info}
		reply := s.handle(api, r, log)
		throttle := reply.Throttle
		if s.RequestQuota != nil && info.Authenticated() {
			throttle = max(throttle, s.RequestQuota(r, &reply, time.Since(start)))
		}
		if throttle > 0 {
			applyThrottle(&reply, throttle)
			s.Metrics.throttled()
		}
		p := pending{hdr: hdr, reply: reply, start: start, reqBytes: reqBytes}
		if ferr := info.takeFailure(); ferr != nil {
			s.Metrics.authFailed()
			log.Warn("authentication failed", "principal", info.Principal(), "err", ferr)
			p.delay, p.reply.Close = s.FailedAuthDelay, true
		} else if hdr.Key == saslAuthenticateKey && info.Authenticated() {
			s.Metrics.authSucceeded()
		}
		if p.reply.None && !p.reply.Close {
			p.reply.Splice.Release()
			s.releaseRequest(reqBytes)
			s.Metrics.observe(hdr.Key, time.Since(start))
			continue
		}
		enqueue(p)
		if p.reply.Close {
			return
		}
		if throttle > 0 {
			// Muted: nothing more is read from a client over its quota
			// until its throttle time has passed.
			select {
			case <-s.After(throttle):
			case <-ctx.Done():
				return
			}
		}
	}
}

// handshake runs the TLS handshake within HandshakeTimeout.
func (s *Server) handshake(ctx context.Context, c net.Conn, info *ConnInfo) (net.Conn, error) {
	tc := tls.Server(c, s.TLS)
	hctx, cancel := context.WithTimeout(ctx, s.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		s.Metrics.authFailed()
		return nil, fmt.Errorf("protocol: TLS handshake: %w", err)
	}
	st := tc.ConnectionState()
	info.TLS = &st
	return tc, nil
}

// awaitFrame waits for the first byte of the next frame. A connection idle
// for IdleTimeout is closed, unless responses are still pending (a long
// poll), in which case it keeps waiting.
func (s *Server) awaitFrame(c net.Conn, br *bufio.Reader, inFlight *atomic.Int64) error {
	for {
		c.SetReadDeadline(time.Now().Add(s.IdleTimeout))
		_, err := br.Peek(1)
		if err == nil {
			return nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && inFlight.Load() > 0 {
			continue
		}
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("protocol: idle for %s", s.IdleTimeout)
		}
		return err
	}
}

// rawToken serves one SaslHandshake v0 token. ok is false when the
// connection must close after p.
func (s *Server) rawToken(br *bufio.Reader, limit int32, info *ConnInfo, fn RawAuth, log *slog.Logger) (p pending, ok bool) {
	token, err := readRawToken(br, limit)
	if err != nil {
		log.Warn("closing connection", "err", err)
		return p, false
	}
	s.Metrics.bytesIn(len(token) + 4)
	p.start = time.Now()
	p.hdr.Key = saslAuthenticateKey
	out, err := fn(token)
	if err == nil {
		err = info.takeFailure()
	}
	if err != nil {
		s.Metrics.authFailed()
		info.FailAuthentication(err)
		info.takeFailure()
		log.Warn("authentication failed", "err", err)
		// v0 has no error field: the failure is a delayed close.
		p.delay, p.reply.Close = s.FailedAuthDelay, true
		return p, false
	}
	if out == nil {
		out = []byte{}
	}
	p.raw = out
	if info.Authenticated() {
		s.Metrics.authSucceeded()
	}
	return p, true
}

// readRawToken reads a size-prefixed SASL token; unlike a request it may be
// empty.
func readRawToken(r io.Reader, max int32) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 0 || n > max {
		return nil, fmt.Errorf("%w: SASL token of %d bytes (limit %d)", ErrFrameSize, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("protocol: truncated SASL token: %w", err)
	}
	return b, nil
}

// handle runs a handler, turning a panic into a closed connection instead of
// a dead broker.
func (s *Server) handle(api API, r *Request, log *slog.Logger) (reply Reply) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("handler panic; closing connection", "api", kmsg.NameForKey(r.Key), "version", r.Version, "panic", p)
			reply = Reply{None: true, Close: true}
		}
		// File runs the reply does not carry hold descriptors nobody
		// would close.
		if r.splice != nil && reply.Splice != r.splice {
			r.splice.Release()
		}
	}()
	return api.Handle(r)
}

func (s *Server) writeLoop(c net.Conn, queue <-chan pending, inFlight *atomic.Int64, queued *ByteBudget, log *slog.Logger) {
	var out []byte
	failed := false
	for p := range queue {
		s.writeOne(c, p, &out, &failed, log)
		if p.enc != nil {
			queued.add(-p.queued)
			s.Metrics.queuedResponseBytes(-p.queued)
			putRespBuf(p.encBuf, p.enc)
		}
		s.releaseRequest(p.reqBytes)
		inFlight.Add(-1)
	}
}

func (s *Server) releaseRequest(n int64) {
	if n > 0 {
		s.RequestBytes.add(-n)
		s.Metrics.queuedRequestBytes(-n)
	}
}

// respBufs recycles encoded response buffers of at most maxPooledResp.
var respBufs sync.Pool

const maxPooledResp = 1 << 20

func getRespBuf() *[]byte {
	if b, ok := respBufs.Get().(*[]byte); ok {
		return b
	}
	return new([]byte)
}

func putRespBuf(buf *[]byte, used []byte) {
	if cap(used) <= maxPooledResp {
		*buf = used[:0]
		respBufs.Put(buf)
	}
}

func (s *Server) writeOne(c net.Conn, p pending, out *[]byte, failed *bool, log *slog.Logger) {
	defer p.reply.Splice.Release()
	if *failed {
		return // drain so the reader never blocks
	}
	if p.delay > 0 {
		<-s.After(p.delay)
	}
	resp := p.reply.Resp
	if p.reply.Later != nil {
		var panicked bool
		resp, panicked = s.later(p, log)
		if panicked {
			p.reply.Close = true
		}
	}
	wire := *out
	switch {
	case p.enc != nil:
		wire = p.enc
	case p.raw != nil:
		*out = binary.BigEndian.AppendUint32((*out)[:0], uint32(len(p.raw)))
		*out = append(*out, p.raw...)
		wire = *out
	case resp != nil:
		*out = AppendResponse((*out)[:0], p.hdr.CorrelationID, resp)
		wire = *out
	default:
		if p.reply.Close {
			c.Close()
			*failed = true
		}
		return
	}
	// Counted before the write, so a client that has its answer can
	// already see it in the metrics.
	s.Metrics.observe(p.hdr.Key, time.Since(p.start))
	sent, err := len(wire), error(nil)
	if sp := p.reply.Splice; sp != nil && p.raw == nil {
		var pieces []piece
		if pieces, sent, err = sp.split(wire); err == nil {
			var direct int
			direct, err = writePieces(c, pieces, s.IdleTimeout)
			s.Metrics.bytesSentfile(direct)
		}
	} else {
		err = writeAll(c, wire, s.IdleTimeout)
	}
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			log.Warn("closing connection: the client read none of its response", "idle", s.IdleTimeout)
		} else if p.reply.Splice != nil && !errors.Is(err, net.ErrClosed) {
			log.Warn("closing connection: a response's file bytes could not be sent", "api_key", p.hdr.Key, "err", err)
		}
		*failed = true
		c.Close()
		return
	}
	s.Metrics.bytesOut(sent)
	if cap(*out) > 1<<20 {
		*out = nil
	}
	if p.reply.Close {
		c.Close()
		*failed = true
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

// AcceptRetryable reports whether an Accept error is a passing state of the
// process rather than a closed listener: a timeout, or running out of file
// descriptors, buffers or memory, or a connection aborted before it was
// accepted. The listener backs off and accepts again, as Kafka's acceptor
// does, instead of stopping.
func AcceptRetryable(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// acceptBackoff doubles the pause after a failed Accept, from 5 ms up to 1 s.
func acceptBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return 5 * time.Millisecond
	}
	return min(2*d, time.Second)
}
