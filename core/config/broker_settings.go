package config

import (
	"sort"
	"strconv"
	"sync"
)

// BrokerSetting is one broker-level setting DescribeConfigs shows under its
// Kafka name.
type BrokerSetting struct {
	Name, Type, Doc string
	Sensitive       bool
	// Dynamic settings can be altered at run time, per broker or
	// cluster-wide, through the metadata log (the replication throttle
	// rates); all others come from broker.toml and are read-only.
	Dynamic bool
	// Value is the setting under a configuration; ok is false where Kafka
	// shows a null value (a setting left to another one).
	Value func(c *Config) (v string, ok bool)
	// Default is the setting's DEFAULT_CONFIG value; ok is false where Kafka
	// has no default (a required setting, or one whose default lives in
	// another setting).
	Default func() (v string, ok bool)
}

// fromConfig is a setting read from the broker configuration whose default
// is its value under Default.
func fromConfig(f func(c *Config) string) (func(*Config) (string, bool), func() (string, bool)) {
	return func(c *Config) (string, bool) { return f(c), true },
		func() (string, bool) { return f(&defaultConfig), true }
}

// nullAtDefault is a setting Kafka shows as null unless it is set: its
// default lives in another setting (log.retention.ms in
// log.retention.hours, log.roll.ms in log.roll.hours).
func nullAtDefault(f func(c *Config) string) (func(*Config) (string, bool), func() (string, bool)) {
	return func(c *Config) (string, bool) {
			v := f(c)
			return v, v != f(&defaultConfig)
		},
		func() (string, bool) { return "", false }
}

// required is a setting Kafka has no default for; it is always STATIC.
func required(f func(c *Config) string) (func(*Config) (string, bool), func() (string, bool)) {
	return func(c *Config) (string, bool) { return f(c), true },
		func() (string, bool) { return "", false }
}

// Broker-level names whose Kafka default is null.
var kafkaNullDefaults = map[string]bool{
	"log.retention.ms":      true,
	"log.roll.ms":           true,
	"log.flush.interval.ms": true,
}

func newBrokerSetting(name, typ, doc string, sensitive bool,
	mk func(func(*Config) string) (func(*Config) (string, bool), func() (string, bool)),
	f func(c *Config) string) BrokerSetting {
	value, def := mk(f)
	return BrokerSetting{Name: name, Type: typ, Doc: doc, Sensitive: sensitive, Value: value, Default: def}
}

// BrokerSettings lists the broker settings DescribeConfigs shows, sorted by
// name: the broker-level names of every topic config, then the settings that
// exist only at broker level.
var BrokerSettings = sync.OnceValue(func() []BrokerSetting {
	byName := map[string]BrokerSetting{}
	for _, def := range TopicConfigDefs() {
		if def.BrokerSynonym == "" {
			continue
		}
		mk := fromConfig
		if kafkaNullDefaults[def.BrokerSynonym] {
			mk = nullAtDefault
		}
		byName[def.BrokerSynonym] = newBrokerSetting(def.BrokerSynonym, def.Type, def.Doc, def.Sensitive, mk, def.BrokerDefault)
	}
	nodeID := func(c *Config) string { return itoa64(int64(c.NodeID)) }
	brokerOnly := []BrokerSetting{
		newBrokerSetting("node.id", TypeInt, "The id of this node in the cluster.", false, required, nodeID),
		{Name: "broker.id", Type: TypeInt, Doc: "The id of this broker; the same as node.id.",
			Value:   func(c *Config) (string, bool) { return nodeID(c), true },
			Default: func() (string, bool) { return "-1", true }},
		newBrokerSetting("process.roles", TypeList, "The roles this node plays: every Gregor node is a broker and a metadata controller.", false,
			required, func(*Config) string { return "broker,controller" }),
		newBrokerSetting("log.dirs", TypeString, "The directory holding the partition logs and the metadata log (data_dir in broker.toml).", false,
			required, func(c *Config) string { return c.DataDir }),
		{Name: "listeners", Type: TypeString, Doc: "The address the Kafka protocol listener binds (listeners.kafka in broker.toml).",
			Value:   func(c *Config) (string, bool) { return "PLAINTEXT://" + c.Listeners.Kafka, true },
			Default: func() (string, bool) { return "PLAINTEXT://:9092", true }},
		{Name: "advertised.listeners", Type: TypeString, Doc: "The address clients are told to connect to (listeners.kafka_advertised in broker.toml); when unset, the listener's own.",
			Value: func(c *Config) (string, bool) {
				return "PLAINTEXT://" + c.Listeners.KafkaAdvertised, c.Listeners.KafkaAdvertised != ""
			},
			Default: func() (string, bool) { return "", false }},
		newBrokerSetting("num.partitions", TypeInt, "The number of partitions of a topic created without an explicit count.", false,
			fromConfig, func(c *Config) string { return itoa64(int64(c.Topics.DefaultPartitions)) }),
		newBrokerSetting("default.replication.factor", TypeInt, "The replication factor of a topic created without an explicit one.", false,
			fromConfig, func(c *Config) string { return itoa64(int64(c.Topics.DefaultReplicationFactor)) }),
		newBrokerSetting("auto.create.topics.enable", TypeBoolean, "Whether a Metadata request for an unknown topic creates it.", false,
			fromConfig, func(c *Config) string { return strconv.FormatBool(c.Topics.AutoCreate) }),
		newBrokerSetting("log.retention.check.interval.ms", TypeLong, "How often the broker checks whether any segment may be deleted under the retention policy.", false,
			fromConfig, func(c *Config) string { return itoa64(c.Log.RetentionCheckIntervalMs) }),
		newBrokerSetting("socket.request.max.bytes", TypeInt, "The largest request the broker reads.", false,
			fromConfig, func(c *Config) string { return itoa64(int64(c.Limits.MaxRequestBytes)) }),
		newBrokerSetting("max.connections", TypeInt, "The most client connections the broker accepts at once.", false,
			fromConfig, func(c *Config) string {
				if c.Limits.MaxConnections == 0 {
					return itoa64(1<<31 - 1)
				}
				return itoa64(int64(c.Limits.MaxConnections))
			}),
	}
	for _, def := range DynamicBrokerConfigDefs() {
		bc := newBrokerSetting(def.Name, def.Type, def.Doc, def.Sensitive, fromConfig, def.BrokerDefault)
		bc.Dynamic = true
		brokerOnly = append(brokerOnly, bc)
	}
	for _, bc := range brokerOnly {
		if _, dup := byName[bc.Name]; dup {
			panic("config: broker setting " + bc.Name + " is listed twice")
		}
		byName[bc.Name] = bc
	}
	out := make([]BrokerSetting, 0, len(byName))
	for _, bc := range byName {
		out = append(out, bc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
})

// BrokerSettingByName indexes BrokerSettings.
var BrokerSettingByName = sync.OnceValue(func() map[string]BrokerSetting {
	m := map[string]BrokerSetting{}
	for _, bc := range BrokerSettings() {
		m[bc.Name] = bc
	}
	return m
})

// defaultConfig is what an unset broker.toml key means.
var defaultConfig = Default()
