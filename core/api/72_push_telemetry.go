package api

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/telemetry"
)

// PushTelemetry (KIP-714) receives a client's metrics as OTLP MetricsData,
// compressed with one of the codecs GetTelemetrySubscriptions offered; the
// decoded gauges and sums are exported on /metrics labelled with the
// client instance id and principal.
func init() { reg(72, 0, 0, (*Broker).handlePushTelemetry) }

func (b *Broker) handlePushTelemetry(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.PushTelemetryRequest)
	resp := req.ResponseKind().(*kmsg.PushTelemetryResponse)
	fail := func(code *kerr.Error) protocol.Reply {
		resp.ErrorCode = code.Code
		return protocol.Reply{Resp: resp}
	}
	switch {
	case req.ClientInstanceID == ([16]byte{}):
		return fail(kerr.InvalidRequest)
	case len(req.Metrics) > int(b.Config.Telemetry.MaxBytes):
		return fail(kerr.TelemetryTooLarge)
	case b.Telemetry == nil:
		return fail(kerr.UnknownSubscriptionID)
	}
	payload := req.Metrics
	if c := record.Codec(req.CompressionType); c != record.CodecNone {
		if c < record.CodecGzip || c > record.CodecZstd {
			return fail(kerr.UnsupportedCompressionType)
		}
		var err error
		// A push is bounded before and after decompression.
		if payload, err = record.Decompress(c, req.Metrics, 16*int(b.Config.Telemetry.MaxBytes)); err != nil {
			return fail(kerr.InvalidRecord)
		}
	}
	plan := b.telemetryPlan(r, req.ClientInstanceID)
	err := b.Telemetry.Push(kafkaUUID(req.ClientInstanceID), telemetryPrincipal(r), plan, req.SubscriptionID, req.Terminating, payload)
	switch {
	case err == nil:
	case errors.Is(err, telemetry.ErrUnknownSubscription):
		return fail(kerr.UnknownSubscriptionID)
	case errors.Is(err, telemetry.ErrThrottled):
		return fail(kerr.ThrottlingQuotaExceeded)
	case errors.Is(err, telemetry.ErrInvalidMetrics):
		b.Logger.Debug("invalid client telemetry", "client", r.ClientID, "err", err)
		return fail(kerr.InvalidRecord)
	default:
		return fail(kerr.UnknownServerError)
	}
	return protocol.Reply{Resp: resp}
}
