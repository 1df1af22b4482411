package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
)

// The synonyms DescribeConfigs shows for a broker setting
// (config.BrokerSettings).

// brokerSynonyms gives the setting's synonyms under c in Kafka's order of
// precedence: its broker.toml value (STATIC_BROKER_CONFIG) when that is not
// the default, then the default (DEFAULT_CONFIG).
func brokerSynonyms(bc config.BrokerSetting, c *config.Config) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	v, ok := bc.Value(c)
	d, hasDef := bc.Default()
	if ok && (!hasDef || v != d) {
		out = append(out, synonym(bc.Name, v, kmsg.ConfigSourceStaticBrokerConfig, bc.Sensitive))
	}
	if hasDef {
		out = append(out, synonym(bc.Name, d, kmsg.ConfigSourceDefaultConfig, bc.Sensitive))
	}
	return out
}

// dynamicSynonyms gives a dynamic setting's synonyms in Kafka's order of
// precedence: the value set on broker node (DYNAMIC_BROKER_CONFIG, skipped
// when node is "", the cluster-wide resource), the cluster-wide value
// (DYNAMIC_DEFAULT_BROKER_CONFIG), then the default (DEFAULT_CONFIG).
func dynamicSynonyms(bc config.BrokerSetting, im *controller.Image, node string) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	if node != "" {
		if v, ok := im.BrokerConfig(node)[bc.Name]; ok {
			out = append(out, synonym(bc.Name, v, kmsg.ConfigSourceDynamicBrokerConfig, bc.Sensitive))
		}
	}
	if v, ok := im.BrokerConfig("")[bc.Name]; ok {
		out = append(out, synonym(bc.Name, v, kmsg.ConfigSourceDynamicDefaultBrokerConfig, bc.Sensitive))
	}
	return append(out, brokerSynonyms(bc, &defaultConfig)...)
}
