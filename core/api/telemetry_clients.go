package api

import (
	"encoding/base64"
	"net"
	"sort"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/telemetry"
)

// kafkaUUID is Kafka's text form of a Uuid (URL-safe base64, unpadded),
// as client instance ids are matched and shown.
func kafkaUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// telemetryPlan is what the client of r with this instance id is asked to
// push under the client-metrics subscriptions in the current image.
func (b *Broker) telemetryPlan(r *protocol.Request, instance [16]byte) telemetry.Plan {
	im := b.Controller.Image()
	var subs []telemetry.Subscription
	var names []string
	for res := range im.Configs {
		if res.Type == controller.ResourceClientMetrics {
			names = append(names, res.Name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		s, err := telemetry.ParseSubscription(name, im.Configs[controller.ConfigResource{Type: controller.ResourceClientMetrics, Name: name}], controller.ParseClientMatch)
		if err != nil {
			b.Logger.Warn("skipping a client-metrics subscription", "err", err)
			continue
		}
		subs = append(subs, s)
	}
	c := telemetry.Client{InstanceID: kafkaUUID(instance), ClientID: r.ClientID}
	if r.Conn != nil {
		c.SoftwareName, c.SoftwareVersion = r.Conn.ClientSoftware()
		if r.Conn.Remote != nil {
			if host, port, err := net.SplitHostPort(r.Conn.Remote.String()); err == nil {
				c.SourceAddress, c.SourcePort = host, port
			}
		}
	}
	return telemetry.Select(subs, c)
}

// telemetryPrincipal is the principal label of a client's series.
func telemetryPrincipal(r *protocol.Request) string {
	if r.Conn != nil {
		if p := r.Conn.Principal(); p != "" {
			return p
		}
	}
	return "User:ANONYMOUS"
}
