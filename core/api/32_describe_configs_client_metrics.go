package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
)

// describeClientMetrics lists a client-metrics subscription's configs:
// those set with source CLIENT_METRICS_CONFIG, the others at their
// defaults, as Kafka does (a subscription nobody created shows only
// defaults).
func (b *Broker) describeClientMetrics(im *controller.Image, name string, wanted func(string) bool, opts describeOpts) ([]kmsg.DescribeConfigsResponseResourceConfig, *apiError) {
	if name == "" {
		return nil, newAPIError(kerr.InvalidRequest, "Client metrics subscription name must not be empty")
	}
	set := im.Configs[controller.ConfigResource{Type: controller.ResourceClientMetrics, Name: name}]
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, def := range controller.ClientMetricsConfigDefs() {
		if !wanted(def.Name) {
			continue
		}
		v, ok := set[def.Name]
		var syns []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
		if ok {
			syns = append(syns, synonym(def.Name, v, kmsg.ConfigSourceClientMetricsConfig, false))
		} else {
			v = def.BrokerDefault(&b.Config)
		}
		out = append(out, configEntry(def.Name, v, def.Type, def.Doc, false, syns, opts))
	}
	return out, nil
}

// checkClientMetricsChange applies Kafka's checks before a subscription
// change reaches the controller (which validates the values).
func checkClientMetricsChange(c configChange) *apiError {
	if c.name == "" {
		return newAPIError(kerr.InvalidRequest, "Client metrics subscription name must not be empty")
	}
	for _, op := range c.ops {
		if op.Op < controller.OpSet || op.Op > controller.OpSubtract {
			return newAPIError(kerr.InvalidRequest, "Unknown operations type "+itoa(int64(op.Op)))
		}
	}
	return nil
}
