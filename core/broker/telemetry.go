package broker

import (
	"sort"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/telemetry"
)

// TelemetrySubscriptions are the client-metrics subscriptions (KIP-714) in
// im, by name; one that does not parse is logged and skipped.
func (b *Broker) TelemetrySubscriptions(im *controller.Image) []telemetry.Subscription {
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
	return subs
}
