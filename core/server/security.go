package server

import (
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gregorbroker/gregor/core/api"
	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// listener is one bound Kafka listener.
type listener struct {
	spec  config.ListenerSpec
	proto protocol.SecurityProtocol
	ln    net.Listener
}

// security is the server's listener and TLS state.
type security struct {
	extra []*listener
	tls   *certReloader
	// limiter bounds connections across every listener.
	limiter *protocol.ConnLimiter
	// requestBytes bounds the request bytes queued across every listener
	// (limits.queued_max_request_bytes); nil is unbounded.
	requestBytes *protocol.ByteBudget
}

// bindExtra binds [[listeners.extra]] and loads TLS files when a listener
// needs them, so that a bad certificate fails at start.
func (s *Server) bindExtra() error {
	specs := s.cfg.KafkaListeners()
	needTLS := false
	for i, spec := range specs {
		p, err := protocol.ParseSecurityProtocol(spec.Protocol)
		if err != nil {
			return fmt.Errorf("server: listener %s: %w", spec.Name, err)
		}
		needTLS = needTLS || p.UsesTLS()
		if i == 0 {
			continue
		}
		ln, err := net.Listen("tcp", spec.Address)
		if err != nil {
			s.closeExtra()
			return fmt.Errorf("server: listener %s: %w", spec.Name, err)
		}
		s.sec.extra = append(s.sec.extra, &listener{spec: spec, proto: p, ln: ln})
	}
	if needTLS {
		r, err := newCertReloader(s.cfg.Security, time.Second)
		if err != nil {
			s.closeExtra()
			return err
		}
		s.sec.tls = r
	}
	return nil
}

func (s *Server) closeExtra() {
	for _, l := range s.sec.extra {
		l.ln.Close()
	}
}

// listeners lists every Kafka listener, the main one first.
func (s *Server) listeners() []*listener {
	main := s.cfg.KafkaListeners()[0]
	p, _ := protocol.ParseSecurityProtocol(main.Protocol)
	out := []*listener{{spec: main, proto: p, ln: s.kafkaLn}}
	return append(out, s.sec.extra...)
}

// ListenerAddr is the bound address of the named Kafka listener, or "".
func (s *Server) ListenerAddr(name string) string {
	for _, l := range s.listeners() {
		if l.spec.Name == name {
			return l.ln.Addr().String()
		}
	}
	return ""
}

// endpoints are the advertised addresses of every listener, registered with
// the broker so that Metadata answers each client with its own listener's.
func (s *Server) endpoints() ([]controller.Endpoint, error) {
	var out []controller.Endpoint
	for i, l := range s.listeners() {
		addr := l.spec.Advertised
		if i == 0 && s.cfg.Listeners.KafkaAdvertised == "" || i > 0 && l.spec.Advertised == l.spec.Address {
			addr = l.ln.Addr().String()
		}
		host, portStr, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("server: listener %s advertised %q: %w", l.spec.Name, addr, err)
		}
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		port, err := strconv.Atoi(portStr)
		if err != nil {
			return nil, fmt.Errorf("server: listener %s port %q: %w", l.spec.Name, portStr, err)
		}
		out = append(out, controller.Endpoint{Listener: l.spec.Name, Host: host, Port: int32(port)})
	}
	return out, nil
}

// protocolServer builds the wire server of one listener.
func (s *Server) protocolServer(l *listener, b *api.Broker, m *protocol.Metrics) (*protocol.Server, error) {
	sec := s.cfg.Security
	// Connection limits hold across listeners, as Kafka's do, so they are
	// the shared limiter's rather than each listener's.
	srv := &protocol.Server{
		Registry:        b.Registry(),
		Name:            l.spec.Name,
		MaxRequestBytes: s.cfg.Limits.MaxRequestBytes,
		Limiter:         s.sec.limiter,
		RequestQuota:    b.RequestQuota,
		Logger:          s.logger.With("listener", l.spec.Name),
		Metrics:         m,
		Security:        l.proto,
		IdleTimeout:     time.Duration(sec.IdleMs) * time.Millisecond,
		RequestBytes:    s.sec.requestBytes,

		MaxQueuedResponseBytes: s.cfg.Limits.ConnectionMaxQueuedResponseBytes,
		FailedAuthDelay:        time.Duration(sec.FailedAuthDelayMs) * time.Millisecond,
	}
	if sec.FailedAuthDelayMs == 0 {
		srv.FailedAuthDelay = -1
	}
	if l.proto.UsesTLS() {
		srv.TLS = s.sec.tls.config()
		mapper, err := auth.ParseMappingRules(sec.PrincipalMappingRules)
		if err != nil {
			return nil, fmt.Errorf("server: security.principal_mapping_rules: %w", err)
		}
		srv.TLSPrincipal = mapper.TLSPrincipal
	}
	return srv, nil
}

// wireSecurity builds the SASL mechanisms and the authorizer for b.
func (s *Server) wireSecurity(b *api.Broker, opts Options) error {
	sec := s.cfg.Security
	store := api.ImageCredentials{Controller: b.Controller}
	fake := make([]byte, 32)
	rand.Read(fake)
	ext := map[string]auth.Mechanism{}
	for _, a := range b.Extensions.Authenticators() {
		for _, m := range auth.FromAuthenticator(a) {
			ext[m.Name()] = m
		}
	}
	var ms []auth.Mechanism
	for _, name := range sec.SASLMechanisms {
		if m, ok := ext[name]; ok {
			ms = append(ms, m)
			continue
		}
		switch name {
		case "PLAIN":
			ms = append(ms, &auth.Plain{Store: store})
		case "SCRAM-SHA-256":
			ms = append(ms, &auth.Scram{Mech: auth.ScramSHA256, Store: store, FakeSalt: fake})
		case "SCRAM-SHA-512":
			ms = append(ms, &auth.Scram{Mech: auth.ScramSHA512, Store: store, FakeSalt: fake})
		case "OAUTHBEARER":
			keys, err := loadOAuthKeys(sec.OAuthPublicKeyFiles)
			if err != nil {
				return err
			}
			ms = append(ms, &auth.OAuthBearer{Keys: keys, Issuer: sec.OAuthIssuer, Audience: sec.OAuthAudience,
				SubClaim: sec.OAuthSubClaim, AllowUnsecured: sec.OAuthAllowUnsecured, ClockSkew: 30 * time.Second, Now: s.now})
		default:
			return fmt.Errorf("server: security.sasl_mechanisms: %q is neither built in nor offered by an extension", name)
		}
	}
	mechs, err := auth.NewMechanisms(ms...)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	b.Security.Mechanisms = mechs
	b.Security.SessionLifetime = time.Duration(sec.SessionLifetimeMs) * time.Millisecond
	qc := auth.DefaultQuotaConfig()
	qc.Now = s.now
	b.Security.Quotas = auth.NewQuotas(qc)
	overrides, err := perIPOverrides(s.cfg.Limits)
	if err != nil {
		return err
	}
	s.sec.requestBytes = protocol.NewByteBudget(s.cfg.Limits.QueuedMaxRequestBytes)
	s.sec.limiter = &protocol.ConnLimiter{
		Max:            s.cfg.Limits.MaxConnections,
		MaxPerIP:       s.cfg.Limits.MaxConnectionsPerIP,
		PerIPOverrides: overrides,
		Rate:           s.cfg.Limits.MaxConnectionCreationRate,
		IPRate:         b.ConnectionRate,
		Now:            s.now,
	}
	switch sec.Authorizer {
	case "none":
	case "acl":
		acls := auth.NewACLAuthorizer(sec.SuperUsers, sec.AllowEveryoneIfNoACL)
		b.Security.ACLs, b.Security.Authorizer = acls, acls
	default:
		az, ok := b.Extensions.Authorizer(sec.Authorizer)
		if !ok {
			return fmt.Errorf("server: security.authorizer: no authorizer extension named %q", sec.Authorizer)
		}
		b.Security.Authorizer = az
	}
	return nil
}

// loadOAuthKeys reads PEM public keys; each file's base name without its
// extension is the key id, and the first key also answers tokens without
// a kid.
func loadOAuthKeys(files []string) (map[string]crypto.PublicKey, error) {
	keys := map[string]crypto.PublicKey{}
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("server: security.oauth_public_key_files: %w", err)
		}
		blk, _ := pem.Decode(data)
		if blk == nil {
			return nil, fmt.Errorf("server: security.oauth_public_key_files: %s holds no PEM block", f)
		}
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("server: security.oauth_public_key_files: %s: %w", f, err)
		}
		keys[strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))] = k
		if i == 0 {
			keys[""] = k
		}
	}
	return keys, nil
}

// certReloader serves the TLS files and reloads them when they change on
// disk (checked at most once per interval), so certificates rotate without a
// restart. A reload that fails keeps the previous certificate.
type certReloader struct {
	sec      config.Security
	interval time.Duration

	mu      sync.Mutex // guards the fields below
	cfg     *tls.Config
	stamp   string
	checked time.Time
}

func newCertReloader(sec config.Security, interval time.Duration) (*certReloader, error) {
	r := &certReloader{sec: sec, interval: interval}
	cfg, stamp, err := r.load()
	if err != nil {
		return nil, err
	}
	r.cfg, r.stamp, r.checked = cfg, stamp, time.Now()
	return r, nil
}

// config returns a TLS config that asks the reloader on every handshake.
func (r *certReloader) config() *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return r.current(), nil },
	}
}

func (r *certReloader) current() *tls.Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < r.interval {
		return r.cfg
	}
	r.checked = time.Now()
	if r.fileStamp() == r.stamp {
		return r.cfg
	}
	if cfg, stamp, err := r.load(); err == nil {
		r.cfg, r.stamp = cfg, stamp
	}
	return r.cfg
}

// fileStamp identifies the files' current versions by size and mtime.
func (r *certReloader) fileStamp() string {
	var b strings.Builder
	for _, f := range []string{r.sec.TLSCertFile, r.sec.TLSKeyFile, r.sec.TLSCAFile} {
		if f == "" {
			continue
		}
		if st, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d;", f, st.Size(), st.ModTime().UnixNano())
		}
	}
	return b.String()
}

func (r *certReloader) load() (*tls.Config, string, error) {
	stamp := r.fileStamp()
	cert, err := tls.LoadX509KeyPair(r.sec.TLSCertFile, r.sec.TLSKeyFile)
	if err != nil {
		return nil, "", fmt.Errorf("server: security.tls_cert_file/tls_key_file: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if r.sec.TLSCAFile != "" {
		pemData, err := os.ReadFile(r.sec.TLSCAFile)
		if err != nil {
			return nil, "", fmt.Errorf("server: security.tls_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemData) {
			return nil, "", fmt.Errorf("server: security.tls_ca_file: %s holds no certificate", r.sec.TLSCAFile)
		}
		cfg.ClientCAs = pool
	}
	switch r.sec.TLSClientAuth {
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, stamp, nil
}

var _ sdkauth.Authorizer = (*auth.ACLAuthorizer)(nil)

// perIPOverrides resolves limits.max_connections_per_ip_overrides to
// addresses: a host name stands for every address it resolves to.
func perIPOverrides(l config.Limits) (map[string]int, error) {
	byHost, err := l.ConnectionsPerIPOverrides()
	if err != nil {
		return nil, fmt.Errorf("server: limits.max_connections_per_ip_overrides: %w", err)
	}
	out := map[string]int{}
	for host, n := range byHost {
		if ip := net.ParseIP(host); ip != nil {
			out[ip.String()] = n
			continue
		}
		addrs, err := net.LookupHost(host)
		if err != nil {
			return nil, fmt.Errorf("server: limits.max_connections_per_ip_overrides: %s: %w", host, err)
		}
		for _, a := range addrs {
			out[a] = n
		}
	}
	return out, nil
}
