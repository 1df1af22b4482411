package api

import (
	"sort"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
)

// brokerConfig is one broker-level setting exposed by DescribeConfigs under
// its Kafka name.
type brokerConfig struct {
	name, typ, doc string
	sensitive      bool
	// dynamic settings can be altered at run time, per broker or
	// cluster-wide, through the metadata log (the replication throttle
	// rates); all others come from broker.toml and are read-only.
	dynamic bool
	// value is the setting under a configuration; ok is false where Kafka
	// shows a null value (a setting left to another one).
	value func(c *config.Config) (v string, ok bool)
	// def is the setting's DEFAULT_CONFIG value; ok is false where Kafka
	// has no default (a required setting, or one whose default lives in
	// another setting).
	def func() (v string, ok bool)
}

// synonyms gives the setting's synonyms under c in Kafka's order of
// precedence: its broker.toml value (STATIC_BROKER_CONFIG) when that is not
// the default, then the default (DEFAULT_CONFIG).
func (bc brokerConfig) synonyms(c *config.Config) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	v, ok := bc.value(c)
	d, hasDef := bc.def()
	if ok && (!hasDef || v != d) {
		out = append(out, synonym(bc.name, v, kmsg.ConfigSourceStaticBrokerConfig, bc.sensitive))
	}
	if hasDef {
		out = append(out, synonym(bc.name, d, kmsg.ConfigSourceDefaultConfig, bc.sensitive))
	}
	return out
}

// fromConfig is a setting read from the broker configuration whose default
// is its value under config.Default.
func fromConfig(f func(c *config.Config) string) (func(*config.Config) (string, bool), func() (string, bool)) {
	return func(c *config.Config) (string, bool) { return f(c), true },
		func() (string, bool) { return f(&defaultConfig), true }
}

// nullAtDefault is a setting Kafka shows as null unless it is set: its
// default lives in another setting (log.retention.ms in
// log.retention.hours, log.roll.ms in log.roll.hours).
func nullAtDefault(f func(c *config.Config) string) (func(*config.Config) (string, bool), func() (string, bool)) {
	return func(c *config.Config) (string, bool) {
			v := f(c)
			return v, v != f(&defaultConfig)
		},
		func() (string, bool) { return "", false }
}

// required is a setting Kafka has no default for; it is always STATIC.
func required(f func(c *config.Config) string) (func(*config.Config) (string, bool), func() (string, bool)) {
	return func(c *config.Config) (string, bool) { return f(c), true },
		func() (string, bool) { return "", false }
}

// Broker-level names whose Kafka default is null.
var kafkaNullDefaults = map[string]bool{
	"log.retention.ms":      true,
	"log.roll.ms":           true,
	"log.flush.interval.ms": true,
}

func newBrokerConfig(name, typ, doc string, sensitive bool,
	mk func(func(*config.Config) string) (func(*config.Config) (string, bool), func() (string, bool)),
	f func(c *config.Config) string) brokerConfig {
	value, def := mk(f)
	return brokerConfig{name: name, typ: typ, doc: doc, sensitive: sensitive, value: value, def: def}
}

// brokerConfigs lists the broker settings DescribeConfigs shows, sorted by
// name: the broker-level names of every topic config, then the settings that
// exist only at broker level.
var brokerConfigs = sync.OnceValue(func() []brokerConfig {
	byName := map[string]brokerConfig{}
	for _, def := range config.TopicConfigDefs() {
		if def.BrokerSynonym == "" {
			continue
		}
		mk := fromConfig
		if kafkaNullDefaults[def.BrokerSynonym] {
			mk = nullAtDefault
		}
		byName[def.BrokerSynonym] = newBrokerConfig(def.BrokerSynonym, def.Type, def.Doc, def.Sensitive, mk, def.BrokerDefault)
	}
	nodeID := func(c *config.Config) string { return itoa(int64(c.NodeID)) }
	brokerOnly := []brokerConfig{
		newBrokerConfig("node.id", config.TypeInt, "The id of this node in the cluster.", false, required, nodeID),
		{name: "broker.id", typ: config.TypeInt, doc: "The id of this broker; the same as node.id.",
			value: func(c *config.Config) (string, bool) { return nodeID(c), true },
			def:   func() (string, bool) { return "-1", true }},
		newBrokerConfig("process.roles", config.TypeList, "The roles this node plays: every Gregor node is a broker and a metadata controller.", false,
			required, func(*config.Config) string { return "broker,controller" }),
		newBrokerConfig("log.dirs", config.TypeString, "The directory holding the partition logs and the metadata log (data_dir in broker.toml).", false,
			required, func(c *config.Config) string { return c.DataDir }),
		{name: "listeners", typ: config.TypeString, doc: "The address the Kafka protocol listener binds (listeners.kafka in broker.toml).",
			value: func(c *config.Config) (string, bool) { return "PLAINTEXT://" + c.Listeners.Kafka, true },
			def:   func() (string, bool) { return "PLAINTEXT://:9092", true }},
		{name: "advertised.listeners", typ: config.TypeString, doc: "The address clients are told to connect to (listeners.kafka_advertised in broker.toml); when unset, the listener's own.",
			value: func(c *config.Config) (string, bool) {
				return "PLAINTEXT://" + c.Listeners.KafkaAdvertised, c.Listeners.KafkaAdvertised != ""
			},
			def: func() (string, bool) { return "", false }},
		newBrokerConfig("num.partitions", config.TypeInt, "The number of partitions of a topic created without an explicit count.", false,
			fromConfig, func(c *config.Config) string { return itoa(int64(c.Topics.DefaultPartitions)) }),
		newBrokerConfig("default.replication.factor", config.TypeInt, "The replication factor of a topic created without an explicit one.", false,
			fromConfig, func(c *config.Config) string { return itoa(int64(c.Topics.DefaultReplicationFactor)) }),
		newBrokerConfig("auto.create.topics.enable", config.TypeBoolean, "Whether a Metadata request for an unknown topic creates it.", false,
			fromConfig, func(c *config.Config) string { return strconv.FormatBool(c.Topics.AutoCreate) }),
		newBrokerConfig("log.retention.check.interval.ms", config.TypeLong, "How often the broker checks whether any segment may be deleted under the retention policy.", false,
			fromConfig, func(c *config.Config) string { return itoa(c.Log.RetentionCheckIntervalMs) }),
		newBrokerConfig("socket.request.max.bytes", config.TypeInt, "The largest request the broker reads.", false,
			fromConfig, func(c *config.Config) string { return itoa(int64(c.Limits.MaxRequestBytes)) }),
		newBrokerConfig("max.connections", config.TypeInt, "The most client connections the broker accepts at once.", false,
			fromConfig, func(c *config.Config) string {
				if c.Limits.MaxConnections == 0 {
					return itoa(1<<31 - 1)
				}
				return itoa(int64(c.Limits.MaxConnections))
			}),
	}
	for _, def := range config.DynamicBrokerConfigDefs() {
		bc := newBrokerConfig(def.Name, def.Type, def.Doc, def.Sensitive, fromConfig, def.BrokerDefault)
		bc.dynamic = true
		brokerOnly = append(brokerOnly, bc)
	}
	for _, bc := range brokerOnly {
		if _, dup := byName[bc.name]; dup {
			panic("api: broker config " + bc.name + " is listed twice")
		}
		byName[bc.name] = bc
	}
	out := make([]brokerConfig, 0, len(byName))
	for _, bc := range byName {
		out = append(out, bc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
})

// brokerConfigByName indexes brokerConfigs.
var brokerConfigByName = sync.OnceValue(func() map[string]brokerConfig {
	m := map[string]brokerConfig{}
	for _, bc := range brokerConfigs() {
		m[bc.name] = bc
	}
	return m
})

// dynamicSynonyms gives a dynamic setting's synonyms in Kafka's order of
// precedence: the value set on broker node (DYNAMIC_BROKER_CONFIG, skipped
// when node is "", the cluster-wide resource), the cluster-wide value
// (DYNAMIC_DEFAULT_BROKER_CONFIG), then the default (DEFAULT_CONFIG).
func (bc brokerConfig) dynamicSynonyms(im *controller.Image, node string) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	if node != "" {
		if v, ok := im.BrokerConfig(node)[bc.name]; ok {
			out = append(out, synonym(bc.name, v, kmsg.ConfigSourceDynamicBrokerConfig, bc.sensitive))
		}
	}
	if v, ok := im.BrokerConfig("")[bc.name]; ok {
		out = append(out, synonym(bc.name, v, kmsg.ConfigSourceDynamicDefaultBrokerConfig, bc.sensitive))
	}
	return append(out, bc.synonyms(&defaultConfig)...)
}
