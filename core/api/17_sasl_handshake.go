package api

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/protocol"
)

func init() { reg(17, 0, 1, (*Broker).handleSaslHandshake) }

// saslStepTimeout bounds one step of an exchange (an extension
// authenticator may call out).
const saslStepTimeout = 10 * time.Second

// handleSaslHandshake picks the mechanism for the exchange that follows:
// SaslAuthenticate requests (v1) or raw tokens (v0). On a non-SASL listener
// the answer is ILLEGAL_SASL_STATE, as in Kafka.
func (b *Broker) handleSaslHandshake(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = b.Security.Mechanisms.Names()
	fail := func(code *kerr.Error, err error) protocol.Reply {
		resp.ErrorCode = code.Code
		r.Conn.FailAuthentication(err)
		return protocol.Reply{Resp: resp}
	}
	if !r.Conn.Security.UsesSASL() {
		resp.SupportedMechanisms = nil
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return protocol.Reply{Resp: resp, Close: true}
	}
	if cur, ex := r.Conn.SASL(); ex != nil {
		return fail(kerr.IllegalSaslState, fmt.Errorf("api: SaslHandshake during a %s exchange", cur))
	}
	if r.Conn.Reauthenticating() {
		prev, _ := r.Conn.SASL()
		if r.Version == 0 || req.Mechanism != prev {
			return fail(kerr.IllegalSaslState, fmt.Errorf("api: re-authentication must use SaslHandshake v1 and %s, not v%d %s", prev, r.Version, req.Mechanism))
		}
	}
	mech, ok := b.Security.Mechanisms.Lookup(req.Mechanism)
	if !ok {
		return fail(kerr.UnsupportedSaslMechanism, fmt.Errorf("api: SASL mechanism %q is not enabled: %w", req.Mechanism, auth.ErrUnsupportedMechanism))
	}
	ex := mech.Start(auth.ConnFacts{Listener: r.Conn.Listener, ClientHost: hostOf(r)})
	r.Conn.SetSASL(mech.Name(), ex)
	if r.Version == 0 {
		conn := r.Conn
		conn.SetRawAuth(func(token []byte) ([]byte, error) {
			out, _, err := b.saslStep(conn, ex, token)
			return out, err
		})
	}
	return protocol.Reply{Resp: resp}
}

// saslStep advances an exchange and, when it completes, authenticates the
// connection. A failure is recorded on the connection, which the server
// delays, counts and closes.
func (b *Broker) saslStep(conn *protocol.ConnInfo, ex auth.Exchange, msg []byte) ([]byte, time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), saslStepTimeout)
	defer cancel()
	out, done, err := ex.Step(ctx, msg)
	if err != nil {
		conn.FailAuthentication(err)
		return nil, time.Time{}, err
	}
	if !done {
		return out, time.Time{}, nil
	}
	o := ex.Outcome()
	principal := o.Principal.String()
	if conn.Reauthenticating() && conn.Principal() != principal {
		err := fmt.Errorf("api: re-authentication as %s on a connection of %s: %w", principal, conn.Principal(), auth.ErrAuthenticationFailed)
		conn.FailAuthentication(err)
		return nil, time.Time{}, err
	}
	expiry := o.Expiry
	if lt := b.Security.SessionLifetime; lt > 0 {
		if e := b.Now().Add(lt); expiry.IsZero() || e.Before(expiry) {
			expiry = e
		}
	}
	mechName, _ := conn.SASL()
	conn.Authenticate(principal, expiry)
	conn.SetSASL(mechName, nil)
	return out, expiry, nil
}
