package protocol

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The SASL handlers here stand in for core/api's: a token "good" logs in as
// User:alice, anything else fails. They exercise the connection state
// machine, not a mechanism.
func secRegistry() *Registry {
	r := NewRegistry()
	r.Add(API{Key: 18, Min: 0, Max: 4, Handle: func(req *Request) Reply {
		return Reply{Resp: req.Msg.(*kmsg.ApiVersionsRequest).ResponseKind()}
	}})
	r.Add(API{Key: 3, Min: 0, Max: 12, Handle: func(req *Request) Reply {
		resp := req.Msg.(*kmsg.MetadataRequest).ResponseKind().(*kmsg.MetadataResponse)
		resp.ClusterID = kmsg.StringPtr(req.Conn.Principal())
		return Reply{Resp: resp}
	}})
	r.Add(API{Key: 17, Min: 0, Max: 1, Handle: func(req *Request) Reply {
		resp := req.Msg.(*kmsg.SASLHandshakeRequest).ResponseKind()
		if req.Version == 0 {
			req.Conn.SetRawAuth(func(tok []byte) ([]byte, error) {
				if string(tok) != "good" {
					return nil, errors.New("bad token")
				}
				req.Conn.Authenticate("User:alice", time.Time{})
				return nil, nil
			})
		}
		return Reply{Resp: resp}
	}})
	r.Add(API{Key: 36, Min: 0, Max: 2, Handle: func(req *Request) Reply {
		m := req.Msg.(*kmsg.SASLAuthenticateRequest)
		resp := m.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		if string(m.SASLAuthBytes) != "good" {
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			req.Conn.FailAuthentication(errors.New("bad token"))
			return Reply{Resp: resp}
		}
		req.Conn.Authenticate("User:alice", time.Time{})
		return Reply{Resp: resp}
	}})
	return r
}

type testServer struct {
	addr string
	srv  *Server
}

func startServer(t *testing.T, srv *Server) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Registry == nil {
		srv.Registry = secRegistry()
	}
	if srv.MaxRequestBytes == 0 {
		srv.MaxRequestBytes = 100 << 20
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &testServer{addr: ln.Addr().String(), srv: srv}
}

type client struct {
	t    *testing.T
	c    net.Conn
	br   *bufio.Reader
	corr int32
}

func dial(t *testing.T, addr string, cfg *tls.Config) *client {
	t.Helper()
	var c net.Conn
	var err error
	if cfg != nil {
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	} else {
		c, err = net.DialTimeout("tcp", addr, 5*time.Second)
	}
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{t: t, c: c, br: bufio.NewReader(c)}
}

func (c *client) send(req kmsg.Request) {
	if err := c.trySend(req); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) trySend(req kmsg.Request) error {
	c.corr++
	b := encodeRequest(req, c.corr, "test")
	_, err := c.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
	return err
}

// recv reads one response; a closed connection returns an error.
func (c *client) recv(resp kmsg.Response) error {
	b, err := readRawToken(c.br, 1<<20)
	if err != nil {
		return err
	}
	if len(b) < 4 || int32(binary.BigEndian.Uint32(b)) != c.corr {
		c.t.Fatalf("bad response header % x", b)
	}
	b = b[4:]
	if resp.IsFlexible() && resp.Key() != 18 {
		b = b[1:]
	}
	return resp.ReadFrom(b)
}

func (c *client) roundTrip(req kmsg.Request) (kmsg.Response, error) {
	c.send(req)
	resp := req.ResponseKind()
	return resp, c.recv(resp)
}

func (c *client) expectClosed() {
	c.t.Helper()
	var b [1]byte
	_, err := c.c.Read(b[:])
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("connection still open (err %v)", err)
	}
}

func metadataReq() *kmsg.MetadataRequest {
	r := kmsg.NewPtrMetadataRequest()
	r.SetVersion(9)
	return r
}

func authReq(tok string) *kmsg.SASLAuthenticateRequest {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.SetVersion(1)
	r.SASLAuthBytes = []byte(tok)
	return r
}

func TestPreAuthRules(t *testing.T) {
	ts := startServer(t, &Server{Security: SASLPlaintext, FailedAuthDelay: -1})
	t.Run("plaintext principal", func(t *testing.T) {
		pts := startServer(t, &Server{})
		c := dial(t, pts.addr, nil)
		resp, err := c.roundTrip(metadataReq())
		if err != nil {
			t.Fatal(err)
		}
		if got := *resp.(*kmsg.MetadataResponse).ClusterID; got != AnonymousPrincipal {
			t.Fatalf("principal %q", got)
		}
	})
	for _, tc := range []struct {
		name string
		run  func(c *client)
	}{
		{"metadata before auth closes", func(c *client) {
			c.send(metadataReq())
			c.expectClosed()
		}},
		{"undecodable body of a forbidden key closes without decoding", func(c *client) {
			// Produce with a garbage body: refused on its key alone.
			c.c.Write([]byte{0, 0, 0, 12, 0, 0, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
			c.expectClosed()
		}},
		{"api versions allowed", func(c *client) {
			r := kmsg.NewPtrApiVersionsRequest()
			if _, err := c.roundTrip(r); err != nil {
				t.Fatal(err)
			}
		}},
		{"large frame before auth closes", func(c *client) {
			c.c.Write(binary.BigEndian.AppendUint32(nil, DefaultMaxPreAuthBytes+1))
			c.expectClosed()
		}},
		{"wrong token closes after the error", func(c *client) {
			resp, err := c.roundTrip(authReq("bad"))
			if err != nil {
				t.Fatal(err)
			}
			if ec := resp.(*kmsg.SASLAuthenticateResponse).ErrorCode; ec != kerr.SaslAuthenticationFailed.Code {
				t.Fatalf("error code %d", ec)
			}
			c.expectClosed()
		}},
		{"good token opens every API and lifts the frame cap", func(c *client) {
			if _, err := c.roundTrip(authReq("good")); err != nil {
				t.Fatal(err)
			}
			resp, err := c.roundTrip(metadataReq())
			if err != nil {
				t.Fatal(err)
			}
			if got := *resp.(*kmsg.MetadataResponse).ClusterID; got != "User:alice" {
				t.Fatalf("principal %q", got)
			}
			// A 1 MiB metadata request (a long client id) is read and answered.
			req := metadataReq()
			c.corr++
			b := encodeRequest(req, c.corr, string(make([]byte, 30000)))
			big := make([]byte, 1<<20)
			c.c.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b)+len(big))))
			c.c.Write(b)
			c.c.Write(big) // trailing bytes are ignored by the decoder
			if err := c.recv(req.ResponseKind()); err != nil {
				t.Fatal(err)
			}
		}},
		{"handshake v0 then raw token", func(c *client) {
			hs := kmsg.NewPtrSASLHandshakeRequest()
			hs.SetVersion(0)
			hs.Mechanism = "PLAIN"
			if _, err := c.roundTrip(hs); err != nil {
				t.Fatal(err)
			}
			c.c.Write(append([]byte{0, 0, 0, 4}, "good"...))
			tok, err := readRawToken(c.br, 100)
			if err != nil || len(tok) != 0 {
				t.Fatalf("raw answer %q, %v", tok, err)
			}
			if _, err := c.roundTrip(metadataReq()); err != nil {
				t.Fatal(err)
			}
		}},
		{"handshake v0 then wrong raw token closes", func(c *client) {
			hs := kmsg.NewPtrSASLHandshakeRequest()
			hs.SetVersion(0)
			if _, err := c.roundTrip(hs); err != nil {
				t.Fatal(err)
			}
			c.c.Write([]byte{0, 0, 0, 0})
			c.expectClosed()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, ts.addr, nil)
			c.t = t
			tc.run(c)
		})
	}
}

func TestFailedAuthDelayed(t *testing.T) {
	release := make(chan time.Time)
	var asked time.Duration
	ts := startServer(t, &Server{Security: SASLPlaintext, FailedAuthDelay: 3 * time.Second,
		After: func(d time.Duration) <-chan time.Time { asked = d; return release }})
	c := dial(t, ts.addr, nil)
	req := authReq("bad")
	c.send(req)
	c.c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var b [1]byte
	if _, err := c.c.Read(b[:]); err == nil {
		t.Fatal("the failure was answered before the delay")
	}
	release <- time.Time{}
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := c.recv(req.ResponseKind()); err != nil {
		t.Fatal(err)
	}
	if asked != 3*time.Second {
		t.Fatalf("delay %v", asked)
	}
	c.expectClosed()
}

func TestSessionExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	reg := secRegistry()
	reg.apis[36] = API{Key: 36, Min: 0, Max: 2, Handle: func(req *Request) Reply {
		req.Conn.Authenticate("User:alice", now.Add(time.Minute))
		return Reply{Resp: req.Msg.ResponseKind()}
	}}
	clock := make(chan time.Time, 1)
	clock <- now
	cur := now
	ts := startServer(t, &Server{Security: SASLPlaintext, Registry: reg, Now: func() time.Time {
		select {
		case cur = <-clock:
		default:
		}
		return cur
	}})
	c := dial(t, ts.addr, nil)
	if _, err := c.roundTrip(authReq("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.roundTrip(metadataReq()); err != nil {
		t.Fatal(err)
	}
	clock <- now.Add(2 * time.Minute)
	c.send(metadataReq())
	c.expectClosed()
}

func TestIdleConnectionCloses(t *testing.T) {
	ts := startServer(t, &Server{IdleTimeout: 50 * time.Millisecond})
	c := dial(t, ts.addr, nil)
	c.expectClosed()
}

func TestConnectionsPerIP(t *testing.T) {
	ts := startServer(t, &Server{MaxConnectionsPerIP: 2})
	a, b := dial(t, ts.addr, nil), dial(t, ts.addr, nil)
	for _, c := range []*client{a, b} {
		if _, err := c.roundTrip(metadataReq()); err != nil {
			t.Fatal(err)
		}
	}
	dial(t, ts.addr, nil).expectClosed()
	a.c.Close()
	// Once a's slot is released a new connection is served.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := dial(t, ts.addr, nil)
		req := metadataReq()
		if c.trySend(req) == nil && c.recv(req.ResponseKind()) == nil {
			break
		}
		c.c.Close()
		if time.Now().After(deadline) {
			t.Fatal("slot never released")
		}
	}
}

func TestTLSListener(t *testing.T) {
	ca, caKey := testCert(t, "ca", nil, nil)
	srvCert, srvKey := testCert(t, "localhost", ca, caKey)
	cliCert, cliKey := testCert(t, "alice", ca, caKey)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	serverTLS := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{srvCert.Raw}, PrivateKey: srvKey}},
		ClientCAs:    pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
		MinVersion:   tls.VersionTLS12,
	}
	ts := startServer(t, &Server{Security: SSL, TLS: serverTLS, TLSPrincipal: func(st *tls.ConnectionState) (string, error) {
		return "User:" + st.PeerCertificates[0].Subject.CommonName, nil
	}})
	for _, tc := range []struct {
		name      string
		cert      bool
		principal string
	}{
		{"no client certificate", false, AnonymousPrincipal},
		{"client certificate", true, "User:alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &tls.Config{RootCAs: pool, ServerName: "localhost"}
			if tc.cert {
				cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{cliCert.Raw}, PrivateKey: cliKey}}
			}
			c := dial(t, ts.addr, cfg)
			resp, err := c.roundTrip(metadataReq())
			if err != nil {
				t.Fatal(err)
			}
			if got := *resp.(*kmsg.MetadataResponse).ClusterID; got != tc.principal {
				t.Fatalf("principal %q, want %q", got, tc.principal)
			}
		})
	}
	t.Run("plaintext client on a TLS listener", func(t *testing.T) {
		c := dial(t, ts.addr, nil)
		req := metadataReq()
		c.send(req)
		if err := c.recv(req.ResponseKind()); err == nil {
			t.Fatal("answered a plaintext client")
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			var ne net.Error
			if !errors.As(err, &ne) {
				t.Logf("closed with %v", err)
			}
		}
	})
}

func TestParseSecurityProtocol(t *testing.T) {
	for _, tc := range []struct {
		in        string
		want      SecurityProtocol
		tls, sasl bool
		bad       bool
	}{
		{"", Plaintext, false, false, false},
		{"PLAINTEXT", Plaintext, false, false, false},
		{"SSL", SSL, true, false, false},
		{"SASL_PLAINTEXT", SASLPlaintext, false, true, false},
		{"SASL_SSL", SASLSSL, true, true, false},
		{"sasl_ssl", "", false, false, true},
		{"TLS", "", false, false, true},
	} {
		got, err := ParseSecurityProtocol(tc.in)
		if (err != nil) != tc.bad || got != tc.want || got.UsesTLS() != tc.tls || got.UsesSASL() != tc.sasl {
			t.Errorf("%q: got %q %v (tls %v sasl %v)", tc.in, got, err, got.UsesTLS(), got.UsesSASL())
		}
	}
}

func testCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	signer, signKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	} else {
		signer, signKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}
