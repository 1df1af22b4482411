package api

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/protocol"
)

func init() { reg(36, 0, 2, (*Broker).handleSaslAuthenticate) }

// handleSaslAuthenticate carries one message of the exchange that
// SaslHandshake v1 started. A wrong credential gets
// SASL_AUTHENTICATION_FAILED with a message that does not say which part was
// wrong; the connection then closes after the failed-auth delay.
func (b *Broker) handleSaslAuthenticate(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	mech, ex := r.Conn.SASL()
	if ex == nil {
		err := fmt.Errorf("api: SaslAuthenticate without a SaslHandshake")
		resp.ErrorCode = kerr.IllegalSaslState.Code
		resp.ErrorMessage = kmsg.StringPtr("Unexpected SaslAuthenticate: no SaslHandshake v1 preceded it")
		r.Conn.FailAuthentication(err)
		return protocol.Reply{Resp: resp}
	}
	ex2, ok := ex.(auth.Exchange)
	if !ok {
		r.Conn.FailAuthentication(fmt.Errorf("api: connection holds a %T, not a SASL exchange", ex))
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return protocol.Reply{Resp: resp}
	}
	out, expiry, err := b.saslStep(r.Conn, ex2, req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := fmt.Sprintf("Authentication failed during authentication due to invalid credentials with SASL mechanism %s", mech)
		if errors.Is(err, auth.ErrMalformed) {
			msg = fmt.Sprintf("Authentication failed: malformed %s message", mech)
		}
		resp.ErrorMessage = &msg
		return protocol.Reply{Resp: resp}
	}
	resp.SASLAuthBytes = out
	if out == nil {
		resp.SASLAuthBytes = []byte{}
	}
	if !expiry.IsZero() && r.Conn.Authenticated() {
		if ms := expiry.Sub(b.Now()).Milliseconds(); ms > 0 {
			resp.SessionLifetimeMillis = ms
		} else {
			resp.SessionLifetimeMillis = 1
		}
	}
	return protocol.Reply{Resp: resp}
}
