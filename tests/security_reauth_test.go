package tests

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/gregorbroker/gregor/core/config"
)

// countingMechanism counts the authentications a client starts.
type countingMechanism struct {
	sasl.Mechanism
	n *atomic.Int64
}

func (m countingMechanism) Authenticate(ctx context.Context, host string) (sasl.Session, []byte, error) {
	m.n.Add(1)
	return m.Mechanism.Authenticate(ctx, host)
}

// rawConn speaks the Kafka protocol one request at a time.
type rawConn struct {
	c    net.Conn
	corr int32
	f    *kmsg.RequestFormatter
}

func (r *rawConn) roundTrip(req kmsg.Request) (kmsg.Response, error) {
	r.corr++
	r.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.c.Write(r.f.AppendRequest(nil, req, r.corr)); err != nil {
		return nil, err
	}
	var sz [4]byte
	if _, err := io.ReadFull(r.c, sz[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(sz[:]))
	if _, err := io.ReadFull(r.c, body); err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	body = body[4:] // correlation id
	if resp.IsFlexible() && req.Key() != 18 {
		body = body[1:] // empty tag buffer
	}
	return resp, resp.ReadFrom(body)
}

// TestReauthentication checks KIP-368 end to end: with sessions of 1.5 s a
// Kafka client re-authenticates on its open connections and keeps working
// without reconnecting, and a client that does not re-authenticate is
// disconnected once its session ends.
func TestReauthentication(t *testing.T) {
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Security.SessionLifetimeMs = 1500
	})
	createSCRAMUsers(t, b.Addr, map[string]string{"re": "re-pw"})
	createTopic(t, b.Addr, "reauth-topic", 1, nil)

	t.Run("a Kafka client re-authenticates in place", func(t *testing.T) {
		var auths, dials atomic.Int64
		mech := countingMechanism{Mechanism: saslMechanisms("re", "re-pw")["SCRAM-SHA-512"], n: &auths}
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(mech), kgo.WithHooks(connectCounter{&dials}))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		start := time.Now()
		for i := 0; time.Since(start) < 5*time.Second; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "reauth-topic", Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatalf("produce %d after %v: %v", i, time.Since(start), err)
			}
			<-tick.C
		}
		// Each connection authenticated once at dial, then again about
		// every session (franz-go re-authenticates shortly before expiry).
		if reauths := auths.Load() - dials.Load(); reauths < 2 {
			t.Fatalf("%d authentications on %d connections in 5 s of 1.5 s sessions: no re-authentication", auths.Load(), dials.Load())
		}
		t.Logf("%d authentications on %d connections", auths.Load(), dials.Load())
	})

	t.Run("a client that does not re-authenticate is cut off", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", secure, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		rc := &rawConn{c: c, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))}
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, "PLAIN"
		if _, err := rc.roundTrip(hs); err != nil {
			t.Fatal(err)
		}
		au := kmsg.NewPtrSASLAuthenticateRequest()
		au.Version, au.SASLAuthBytes = 2, []byte("\x00re\x00re-pw")
		resp, err := rc.roundTrip(au)
		if err != nil {
			t.Fatal(err)
		}
		ar := resp.(*kmsg.SASLAuthenticateResponse)
		if ar.ErrorCode != 0 || ar.SessionLifetimeMillis <= 0 || ar.SessionLifetimeMillis > 1500 {
			t.Fatalf("authenticate: code %d, session lifetime %d ms", ar.ErrorCode, ar.SessionLifetimeMillis)
		}
		expiry := time.Now().Add(time.Duration(ar.SessionLifetimeMillis) * time.Millisecond)
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 12
		if _, err := rc.roundTrip(md); err != nil {
			t.Fatalf("metadata within the session: %v", err)
		}
		// Requests keep being served until the session ends, then the
		// connection is closed.
		for {
			_, err := rc.roundTrip(md)
			if err != nil {
				if time.Now().Before(expiry) {
					t.Fatalf("cut off %v before the session ended: %v", time.Until(expiry), err)
				}
				return
			}
			if time.Since(expiry) > 10*time.Second {
				t.Fatal("still served 10 s after the session ended")
			}
			time.Sleep(100 * time.Millisecond) // pacing, not synchronisation
		}
	})
}

type connectCounter struct{ n *atomic.Int64 }

func (h connectCounter) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		h.n.Add(1)
	}
}
