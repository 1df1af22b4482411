package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/gregorbroker/gregor/core/api"
	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
)

// The controller listener (listeners.controller) is secured as
// cluster.controller_listener_protocol says, before the controller reads a
// byte of Raft or of a controller RPC: TLS with client certificates
// required and verified against security.tls_ca_file, and/or a SASL
// exchange in Kafka's frames (SaslHandshake v1, then SaslAuthenticate v2)
// with the cluster.inter_broker_sasl_* credentials. The controller admits
// the resulting principal only when it is a super user.

// maxPeerAuthFrame bounds a frame of the controller plane's SASL exchange.
const maxPeerAuthFrame = 64 << 10

// peerSecurity implements controller.PeerSecurity.
type peerSecurity struct {
	protocol string
	tls      *certReloader
	mapper   *auth.PrincipalMapper
	// client is this broker's own SASL mechanism; mechs verify peers.
	client sasl.Mechanism
	mechs  *auth.Mechanisms
	// failDelay pauses before a failed SASL exchange is answered, as on
	// the Kafka listeners (security.failed_auth_delay_ms).
	failDelay time.Duration
}

// controllerPeerSecurity builds the controller listener's security, or nil
// for PLAINTEXT.
func (s *Server) controllerPeerSecurity() (controller.PeerSecurity, error) {
	p := s.cfg.ControllerProtocol()
	if p == config.ProtocolPlaintext || !s.cfg.MultiNode() {
		return nil, nil
	}
	ps := &peerSecurity{protocol: p, failDelay: time.Duration(s.cfg.Security.FailedAuthDelayMs) * time.Millisecond}
	if config.IsTLSProtocol(p) {
		if s.sec.tls == nil {
			r, err := newCertReloader(s.cfg.Security, time.Second)
			if err != nil {
				return nil, err
			}
			s.sec.tls = r
		}
		ps.tls = s.sec.tls
		m, err := auth.ParseMappingRules(s.cfg.Security.PrincipalMappingRules)
		if err != nil {
			return nil, fmt.Errorf("server: security.principal_mapping_rules: %w", err)
		}
		ps.mapper = m
	}
	if config.IsSASLProtocol(p) {
		cl := s.cfg.Cluster
		mech, err := interBrokerSASL(cl)
		if err != nil {
			return nil, err
		}
		ps.client = mech
		store, err := s.peerCredentials(cl.InterBrokerSASLUsername, cl.InterBrokerSASLPassword)
		if err != nil {
			return nil, err
		}
		fake := make([]byte, 32)
		rand.Read(fake)
		ps.mechs, err = auth.NewMechanisms(&auth.Plain{Store: store},
			&auth.Scram{Mech: auth.ScramSHA256, Store: store, FakeSalt: fake},
			&auth.Scram{Mech: auth.ScramSHA512, Store: store, FakeSalt: fake})
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	return ps, nil
}

// peerCredentialStore verifies the controller plane's SASL peers: this
// broker's own inter-broker credential (every node of a cluster carries
// it, so a new cluster can form before any SCRAM credential is in the
// metadata log), then the SCRAM credentials of the metadata image.
type peerCredentialStore struct {
	own  auth.CredentialMap
	ctrl *atomic.Pointer[controller.Controller]
}

func (p peerCredentialStore) ScramCredential(user string, mech auth.ScramMechanism) (auth.ScramCredential, bool) {
	if c, ok := p.own.ScramCredential(user, mech); ok {
		return c, true
	}
	if ctrl := p.ctrl.Load(); ctrl != nil {
		return api.ImageCredentials{Controller: ctrl}.ScramCredential(user, mech)
	}
	return auth.ScramCredential{}, false
}

func (s *Server) peerCredentials(user, password string) (auth.CredentialStore, error) {
	own := auth.CredentialMap{}
	for _, m := range []auth.ScramMechanism{auth.ScramSHA256, auth.ScramSHA512} {
		salt := make([]byte, 16)
		rand.Read(salt)
		c, err := auth.CredentialFromPassword(m, password, salt, 4096)
		if err != nil {
			return nil, fmt.Errorf("server: cluster.inter_broker_sasl_password: %w", err)
		}
		own[user] = append(own[user], c)
	}
	return peerCredentialStore{own: own, ctrl: &s.ctrlRef}, nil
}

// Accept implements controller.PeerSecurity.
func (p *peerSecurity) Accept(ctx context.Context, conn net.Conn) (net.Conn, string, error) {
	principal := "User:ANONYMOUS"
	if p.tls != nil {
		tc := tls.Server(conn, &tls.Config{
			MinVersion: tls.VersionTLS12,
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
				c := p.tls.current().Clone()
				c.ClientAuth = tls.RequireAndVerifyClientCert
				return c, nil
			},
		})
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, "", fmt.Errorf("server: controller listener: TLS: %w", err)
		}
		st := tc.ConnectionState()
		pr, err := p.mapper.TLSPrincipal(&st)
		if err != nil {
			return nil, "", fmt.Errorf("server: controller listener: %w", err)
		}
		principal, conn = pr, tc
	}
	if p.mechs != nil {
		pr, err := p.saslAccept(ctx, conn)
		if err != nil {
			return nil, "", err
		}
		principal = pr
	}
	return conn, principal, nil
}

// Dial implements controller.PeerSecurity.
func (p *peerSecurity) Dial(ctx context.Context, conn net.Conn, addr string) (net.Conn, error) {
	if p.tls != nil {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("server: controller peer %q: %w", addr, err)
		}
		r := p.tls
		cur := r.current()
		tc := tls.Client(conn, &tls.Config{
			MinVersion: tls.VersionTLS12,
			ServerName: host,
			RootCAs:    cur.ClientCAs,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				c := r.current()
				if len(c.Certificates) == 0 {
					return &tls.Certificate{}, nil
				}
				return &c.Certificates[0], nil
			},
		})
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("server: controller peer %s: TLS: %w", addr, err)
		}
		conn = tc
	}
	if p.client != nil {
		if err := p.saslDial(ctx, conn, addr); err != nil {
			return nil, err
		}
	}
	return conn, nil
}

// saslDial runs this broker's side of the SASL exchange.
func (p *peerSecurity) saslDial(ctx context.Context, conn net.Conn, addr string) error {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("gregor-controller"))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, p.client.Name()
	var hsResp kmsg.SASLHandshakeResponse
	if err := peerRoundTrip(conn, f, hs, &hsResp, 1); err != nil {
		return fmt.Errorf("server: controller peer %s: SASL handshake: %w", addr, err)
	}
	if err := kerr.ErrorForCode(hsResp.ErrorCode); err != nil {
		return fmt.Errorf("server: controller peer %s: SASL handshake: %w", addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	session, msg, err := p.client.Authenticate(ctx, host)
	if err != nil {
		return fmt.Errorf("server: controller peer %s: SASL: %w", addr, err)
	}
	for corr := int32(2); corr < 10; corr++ {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 2, msg
		var resp kmsg.SASLAuthenticateResponse
		if err := peerRoundTrip(conn, f, req, &resp, corr); err != nil {
			return fmt.Errorf("server: controller peer %s: SASL: %w", addr, err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return fmt.Errorf("server: controller peer %s: SASL: %w", addr, err)
		}
		done, next, err := session.Challenge(resp.SASLAuthBytes)
		if err != nil {
			return fmt.Errorf("server: controller peer %s: SASL: %w", addr, err)
		}
		if done {
			return nil
		}
		msg = next
	}
	return fmt.Errorf("server: controller peer %s: SASL exchange does not end", addr)
}

// saslAccept runs the server side of the SASL exchange and returns the
// authenticated principal.
func (p *peerSecurity) saslAccept(ctx context.Context, conn net.Conn) (string, error) {
	key, ver, corr, body, err := readPeerRequest(conn)
	if err != nil {
		return "", err
	}
	if key != 17 || ver != 1 {
		return "", fmt.Errorf("server: controller listener: want SaslHandshake v1 first, got api key %d version %d", key, ver)
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	if err := hs.ReadFrom(body); err != nil {
		return "", fmt.Errorf("server: controller listener: SaslHandshake: %w", err)
	}
	hsResp := hs.ResponseKind().(*kmsg.SASLHandshakeResponse)
	hsResp.SupportedMechanisms = p.mechs.Names()
	m, ok := p.mechs.Lookup(hs.Mechanism)
	if !ok {
		hsResp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		writePeerResponse(conn, corr, hsResp)
		return "", fmt.Errorf("server: controller listener: SASL mechanism %q is not offered", hs.Mechanism)
	}
	if err := writePeerResponse(conn, corr, hsResp); err != nil {
		return "", err
	}
	ex := m.Start(auth.ConnFacts{Listener: "CONTROLLER", ClientHost: hostOf(conn.RemoteAddr())})
	for range 8 {
		key, ver, corr, body, err := readPeerRequest(conn)
		if err != nil {
			return "", err
		}
		if key != 36 || ver < 0 || ver > 2 {
			return "", fmt.Errorf("server: controller listener: want SaslAuthenticate, got api key %d version %d", key, ver)
		}
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version = ver
		if err := req.ReadFrom(body); err != nil {
			return "", fmt.Errorf("server: controller listener: SaslAuthenticate: %w", err)
		}
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		reply, done, err := ex.Step(ctx, req.SASLAuthBytes)
		if err != nil {
			if p.failDelay > 0 {
				select {
				case <-time.After(p.failDelay):
				case <-ctx.Done():
				}
			}
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			resp.ErrorMessage = kmsg.StringPtr("Authentication failed")
			writePeerResponse(conn, corr, resp)
			return "", fmt.Errorf("server: controller listener: SASL %s: %w", m.Name(), err)
		}
		resp.SASLAuthBytes = reply
		if err := writePeerResponse(conn, corr, resp); err != nil {
			return "", err
		}
		if done {
			return ex.Outcome().Principal.String(), nil
		}
	}
	return "", errors.New("server: controller listener: SASL exchange does not end")
}

func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	return a.String()
}

// readPeerFrame reads one size-prefixed frame of at most maxPeerAuthFrame.
func readPeerFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, fmt.Errorf("server: controller listener: %w", err)
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n <= 0 || n > maxPeerAuthFrame {
		return nil, fmt.Errorf("server: controller listener: authentication frame of %d bytes is outside (0, %d]", n, maxPeerAuthFrame)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("server: controller listener: %w", err)
	}
	return buf, nil
}

// readPeerRequest reads a request frame and returns its header fields and
// body.
func readPeerRequest(r io.Reader) (key, version int16, corr int32, body []byte, err error) {
	frame, err := readPeerFrame(r)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	rd := kbin.Reader{Src: frame}
	key, version, corr = rd.Int16(), rd.Int16(), rd.Int32()
	rd.NullableString()
	if req := kmsg.RequestForKey(key); req != nil && version >= 0 && version <= req.MaxVersion() {
		req.SetVersion(version)
		if req.IsFlexible() {
			kmsg.SkipTags(&rd)
		}
	}
	if !rd.Ok() {
		return 0, 0, 0, nil, errors.New("server: controller listener: truncated request header")
	}
	return key, version, corr, rd.Src, nil
}

func writePeerResponse(w io.Writer, corr int32, resp kmsg.Response) error {
	out := kbin.AppendInt32(nil, 0)
	out = kbin.AppendInt32(out, corr)
	if resp.IsFlexible() {
		out = append(out, 0)
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	_, err := w.Write(out)
	return err
}

// peerRoundTrip sends req and decodes the response into resp.
func peerRoundTrip(conn net.Conn, f *kmsg.RequestFormatter, req kmsg.Request, resp kmsg.Response, corr int32) error {
	if _, err := conn.Write(f.AppendRequest(nil, req, corr)); err != nil {
		return err
	}
	frame, err := readPeerFrame(conn)
	if err != nil {
		return err
	}
	rd := kbin.Reader{Src: frame}
	if got := rd.Int32(); !rd.Ok() || got != corr {
		return fmt.Errorf("correlation id %d, want %d", got, corr)
	}
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() {
		kmsg.SkipTags(&rd)
	}
	if !rd.Ok() {
		return errors.New("truncated response header")
	}
	return resp.ReadFrom(rd.Src)
}
