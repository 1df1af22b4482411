// Package wire speaks just enough of the Kafka wire protocol for Gregor's interop tools: one
// request at a time on a plain TCP or TLS connection, encoded and decoded with franz-go's kmsg. It owns
// no retries and no negotiation; callers choose versions.
package wire

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxResponse bounds what the probe reads from a peer before allocating.
const maxResponse = 16 << 20

// Conn is one connection; it is not safe for concurrent use.
type Conn struct {
	c    net.Conn
	r    *bufio.Reader
	corr int32
}

// Dial connects to addr; every later call must finish within timeout of the dial.
func Dial(addr string, timeout time.Duration) (*Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("wire: dial %s: %w", addr, err)
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	return &Conn{c: c, r: bufio.NewReader(c)}, nil
}

// DialTLS connects to addr and completes a TLS handshake with cfg before returning; every
// later call must finish within timeout of the dial.
func DialTLS(addr string, timeout time.Duration, cfg *tls.Config) (*Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, fmt.Errorf("wire: dial TLS %s: %w", addr, err)
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	return &Conn{c: c, r: bufio.NewReader(c)}, nil
}

// Close closes the connection.
func (rc *Conn) Close() error { return rc.c.Close() }

// RoundTrip sends req at its set version and decodes the answer into resp.
func (rc *Conn) RoundTrip(req kmsg.Request, resp kmsg.Response) error {
	rc.corr++
	body := []byte{0, 0, 0, 0}
	body = binary.BigEndian.AppendUint16(body, uint16(req.Key()))
	body = binary.BigEndian.AppendUint16(body, uint16(req.GetVersion()))
	body = binary.BigEndian.AppendUint32(body, uint32(rc.corr))
	id := "gregor-interop"
	body = binary.BigEndian.AppendUint16(body, uint16(len(id)))
	body = append(body, id...)
	if req.IsFlexible() {
		body = append(body, 0) // empty tagged fields
	}
	body = req.AppendTo(body)
	binary.BigEndian.PutUint32(body, uint32(len(body)-4))
	if _, err := rc.c.Write(body); err != nil {
		return fmt.Errorf("wire: write %s: %w", kmsg.NameForKey(req.Key()), err)
	}
	var sz [4]byte
	if _, err := io.ReadFull(rc.r, sz[:]); err != nil {
		return fmt.Errorf("wire: read %s size: %w", kmsg.NameForKey(req.Key()), err)
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 4 || n > maxResponse {
		return fmt.Errorf("wire: %s response size %d out of range", kmsg.NameForKey(req.Key()), n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(rc.r, buf); err != nil {
		return fmt.Errorf("wire: read %s body: %w", kmsg.NameForKey(req.Key()), err)
	}
	if got := int32(binary.BigEndian.Uint32(buf)); got != rc.corr {
		return fmt.Errorf("wire: %s correlation id %d, want %d", kmsg.NameForKey(req.Key()), got, rc.corr)
	}
	buf = buf[4:]
	resp.SetVersion(req.GetVersion())
	// ApiVersions always answers with header v0, whatever its version.
	if resp.IsFlexible() && req.Key() != 18 {
		if len(buf) == 0 {
			return fmt.Errorf("wire: %s response header truncated", kmsg.NameForKey(req.Key()))
		}
		// Skip the response header's tagged fields (the count is 0 for every broker we meet).
		if buf[0] != 0 {
			return fmt.Errorf("wire: %s response header carries %d tagged fields", kmsg.NameForKey(req.Key()), buf[0])
		}
		buf = buf[1:]
	}
	if err := resp.ReadFrom(buf); err != nil {
		return fmt.Errorf("wire: decode %s v%d: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return nil
}
