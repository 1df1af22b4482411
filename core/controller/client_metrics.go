package controller

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gregorbroker/gregor/core/config"
)

// ResourceClientMetrics is a client-metrics subscription (KIP-714): a named
// config resource saying which metrics matching clients push and how
// often. Subscriptions travel through the metadata log as set_configs
// records like topic and broker configs.
const ResourceClientMetrics ResourceType = 16

// Client-metrics config names and Kafka's defaults and bounds.
const (
	ClientMetricsMetrics    = "metrics"
	ClientMetricsIntervalMs = "interval.ms"
	ClientMetricsMatch      = "match"

	DefaultClientMetricsIntervalMs = 300000
	minClientMetricsIntervalMs     = 100
	maxClientMetricsIntervalMs     = 3600000
)

// ClientMatchKeys are the client selectors a match entry may name.
var ClientMatchKeys = []string{"client_instance_id", "client_id", "client_software_name",
	"client_software_version", "client_source_address", "client_source_port"}

var clientMetricsDefs = map[string]config.TopicConfigDef{
	ClientMetricsMetrics: {
		Name: ClientMetricsMetrics, Type: config.TypeList,
		Doc:           "The telemetry metric name prefixes to be pushed by the client; \"*\" selects every metric.",
		Validate:      func(string) error { return nil },
		BrokerDefault: func(*config.Config) string { return "" },
	},
	ClientMetricsIntervalMs: {
		Name: ClientMetricsIntervalMs, Type: config.TypeInt,
		Doc:           "The frequency in milliseconds at which the client pushes the subscribed metrics.",
		Validate:      validateIntervalMs,
		BrokerDefault: func(*config.Config) string { return strconv.Itoa(DefaultClientMetricsIntervalMs) },
	},
	ClientMetricsMatch: {
		Name: ClientMetricsMatch, Type: config.TypeList,
		Doc:           "The clients the subscription applies to: a list of selector=regular expression, e.g. client_software_name=apache-kafka-java; empty matches every client.",
		Validate:      validateMatch,
		BrokerDefault: func(*config.Config) string { return "" },
	},
}

// ClientMetricsConfigDefs lists the client-metrics configs by name.
func ClientMetricsConfigDefs() []config.TopicConfigDef {
	out := make([]config.TopicConfigDef, 0, len(clientMetricsDefs))
	for _, name := range []string{ClientMetricsIntervalMs, ClientMetricsMatch, ClientMetricsMetrics} {
		out = append(out, clientMetricsDefs[name])
	}
	return out
}

func lookupClientMetricsConfig(name string) (config.TopicConfigDef, bool) {
	d, ok := clientMetricsDefs[name]
	return d, ok
}

func validateIntervalMs(v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return fmt.Errorf("%q is not an int", v)
	}
	if n < minClientMetricsIntervalMs || n > maxClientMetricsIntervalMs {
		return fmt.Errorf("%d is outside [%d, %d]", n, minClientMetricsIntervalMs, maxClientMetricsIntervalMs)
	}
	return nil
}

func validateMatch(v string) error {
	_, err := ParseClientMatch(v)
	return err
}

// ParseClientMatch parses a match config: comma-separated
// selector=regular expression entries, each selector at most once.
func ParseClientMatch(v string) (map[string]*regexp.Regexp, error) {
	out := map[string]*regexp.Regexp{}
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		key, pattern, ok := strings.Cut(item, "=")
		if !ok || pattern == "" {
			return nil, fmt.Errorf("match entry %q is not selector=pattern", item)
		}
		key = strings.TrimSpace(key)
		if !slices.Contains(ClientMatchKeys, key) {
			return nil, fmt.Errorf("match selector %q is not one of %s", key, strings.Join(ClientMatchKeys, ", "))
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("match selector %q is given twice", key)
		}
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		if err != nil {
			return nil, fmt.Errorf("match selector %s: %w", key, err)
		}
		out[key] = re
	}
	return out, nil
}
