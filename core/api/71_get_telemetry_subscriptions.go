package api

import (
	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/record"
)

// GetTelemetrySubscriptions (KIP-714) tells a client which metrics to push
// and how often, from the client-metrics subscriptions matching it; a
// client without an instance id is given a new one. Metrics are asked for
// with cumulative temporality, the form Prometheus exports.
func init() { reg(71, 0, 0, (*Broker).handleGetTelemetrySubscriptions) }

// telemetryCompressions are the codecs accepted for pushes, Kafka's order
// of preference.
var telemetryCompressions = []int8{int8(record.CodecZstd), int8(record.CodecLZ4), int8(record.CodecGzip), int8(record.CodecSnappy)}

func (b *Broker) handleGetTelemetrySubscriptions(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.GetTelemetrySubscriptionsRequest)
	resp := req.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	id := req.ClientInstanceID
	if id == ([16]byte{}) {
		id = uuid.New()
	}
	plan := b.telemetryPlan(r, id)
	resp.ClientInstanceID = id
	resp.SubscriptionID = plan.SubscriptionID
	resp.AcceptedCompressionTypes = telemetryCompressions
	resp.PushIntervalMillis = plan.IntervalMs
	resp.TelemetryMaxBytes = b.Config.Telemetry.MaxBytes
	resp.DeltaTemporality = false
	resp.RequestedMetrics = plan.Metrics
	if resp.RequestedMetrics == nil {
		resp.RequestedMetrics = []string{}
	}
	return protocol.Reply{Resp: resp}
}
