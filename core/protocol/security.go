package protocol

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ErrUnauthenticated closes a connection that called an API it may not call
// yet: anything but ApiVersions and SASL before authentication, or after the
// session expired.
var ErrUnauthenticated = errors.New("protocol: not authenticated")

// SecurityProtocol is a listener's security protocol, named as in Kafka.
type SecurityProtocol string

// The four Kafka security protocols.
const (
	Plaintext     SecurityProtocol = "PLAINTEXT"
	SSL           SecurityProtocol = "SSL"
	SASLPlaintext SecurityProtocol = "SASL_PLAINTEXT"
	SASLSSL       SecurityProtocol = "SASL_SSL"
)

// ParseSecurityProtocol accepts Kafka's names; empty means PLAINTEXT.
func ParseSecurityProtocol(s string) (SecurityProtocol, error) {
	switch p := SecurityProtocol(s); p {
	case "":
		return Plaintext, nil
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
		return p, nil
	}
	return "", fmt.Errorf("protocol: unknown security protocol %q (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", s)
}

// UsesTLS reports whether connections are wrapped in TLS.
func (p SecurityProtocol) UsesTLS() bool { return p == SSL || p == SASLSSL }

// UsesSASL reports whether clients must authenticate with SASL.
func (p SecurityProtocol) UsesSASL() bool { return p == SASLPlaintext || p == SASLSSL }

// AnonymousPrincipal is the principal of PLAINTEXT connections and of SSL
// connections without a client certificate, as in Kafka.
const AnonymousPrincipal = "User:ANONYMOUS"

// DefaultMaxPreAuthBytes caps a frame before the connection has
// authenticated (Kafka's sasl.server.max.receive.size), so an
// unauthenticated peer cannot make the broker allocate large buffers.
const DefaultMaxPreAuthBytes = 512 << 10

// DefaultIdleTimeout closes connections that sent nothing for this long
// (Kafka's connections.max.idle.ms).
const DefaultIdleTimeout = 10 * time.Minute

// DefaultMaxQueuedResponseBytes is Server.MaxQueuedResponseBytes when unset.
const DefaultMaxQueuedResponseBytes = 1 << 20

// DefaultFailedAuthDelay delays the answer to a failed authentication
// (Kafka's connection.failed.authentication.delay.ms).
const DefaultFailedAuthDelay = 100 * time.Millisecond

// API keys allowed before authentication.
const (
	saslHandshakeKey    = 17
	saslAuthenticateKey = 36
)

// PreAuthAllowed reports whether an API may be called before the connection
// has authenticated: only ApiVersions, SaslHandshake and SaslAuthenticate.
// It is judged from the key alone, before the body is decoded.
func PreAuthAllowed(key int16) bool {
	return key == apiVersionsKey || key == saslHandshakeKey || key == saslAuthenticateKey
}

// RawAuth consumes one raw SASL token (SaslHandshake v0 framing, where tokens
// travel without a Kafka request header) and returns the token to send back.
type RawAuth func(token []byte) ([]byte, error)

// ConnInfo describes a client connection to handlers. The identity fields
// are fixed once the connection is served; the authentication state changes
// under mu as SASL proceeds.
type ConnInfo struct {
	ID       uint64
	Remote   net.Addr
	Local    net.Addr
	Listener string
	Security SecurityProtocol
	// TLS is the completed handshake's state on SSL and SASL_SSL listeners.
	TLS *tls.ConnectionState

	mu            sync.Mutex // guards the fields below
	closedCh      chan struct{}
	isClosed      bool
	principal     string
	authenticated bool
	mechanism     string
	exchange      any
	expiry        time.Time
	failed        error
	raw           RawAuth
	authCount     int
	softwareName  string
	softwareVer   string
}

// SetClientSoftware records the client software name and version an
// ApiVersions v3+ request stated (KIP-511).
func (c *ConnInfo) SetClientSoftware(name, version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.softwareName, c.softwareVer = name, version
}

// ClientSoftware is the client software name and version, "" if unknown.
func (c *ConnInfo) ClientSoftware() (name, version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.softwareName, c.softwareVer
}

// Principal is the authenticated principal ("User:alice"), or "" before
// authentication on a SASL listener.
func (c *ConnInfo) Principal() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.principal
}

// Authenticated reports whether the connection may call every API.
func (c *ConnInfo) Authenticated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.authenticated
}

// Reauthenticating reports whether the connection has authenticated before;
// a later SASL exchange is a KIP-368 re-authentication.
func (c *ConnInfo) Reauthenticating() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.authCount > 0
}

// SessionExpiry is when the authenticated session ends (zero: never).
func (c *ConnInfo) SessionExpiry() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expiry
}

// SASL returns the mechanism chosen by SaslHandshake and the mechanism's
// exchange state.
func (c *ConnInfo) SASL() (mechanism string, exchange any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mechanism, c.exchange
}

// SetSASL records the mechanism and the exchange in progress.
func (c *ConnInfo) SetSASL(mechanism string, exchange any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mechanism, c.exchange = mechanism, exchange
}

// SetRawAuth switches the connection to raw SASL tokens (SaslHandshake v0)
// until fn authenticates the connection or fails.
func (c *ConnInfo) SetRawAuth(fn RawAuth) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw = fn
}

func (c *ConnInfo) rawAuth() RawAuth {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw
}

// Authenticate completes a SASL exchange: the connection gets principal and
// every API until expiry (zero: no expiry). A re-authentication must keep the
// principal; the caller checks that.
func (c *ConnInfo) Authenticate(principal string, expiry time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.principal, c.authenticated, c.expiry = principal, true, expiry
	c.exchange, c.raw, c.failed = nil, nil, nil
	c.authCount++
}

// FailAuthentication marks the exchange as failed: the server delays the
// reply that carries the failure, counts it and then closes the connection.
func (c *ConnInfo) FailAuthentication(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = err
	c.exchange, c.raw = nil, nil
}

func (c *ConnInfo) takeFailure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.failed
	c.failed = nil
	return err
}

// frameLimit is the largest frame the connection may send now.
func (c *ConnInfo) frameLimit(max, preAuth int32) int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.authenticated && preAuth < max {
		return preAuth
	}
	return max
}

// admits reports whether a request with key may be served now, and why not.
func (c *ConnInfo) admits(key int16, now time.Time) error {
	if PreAuthAllowed(key) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.authenticated {
		return fmt.Errorf("protocol: %w: API key %d before authentication", ErrUnauthenticated, key)
	}
	if !c.expiry.IsZero() && !now.Before(c.expiry) {
		return fmt.Errorf("protocol: %w: session expired at %s", ErrUnauthenticated, c.expiry.Format(time.RFC3339))
	}
	return nil
}

// Closed is closed when the connection has ended; state tied to a
// connection (share sessions) is released then.
func (i *ConnInfo) Closed() <-chan struct{} {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closedCh == nil {
		i.closedCh = make(chan struct{})
	}
	return i.closedCh
}

func (i *ConnInfo) markClosed() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closedCh == nil {
		i.closedCh = make(chan struct{})
	}
	if !i.isClosed {
		close(i.closedCh)
		i.isClosed = true
	}
}
