package api

import (
	"sort"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
)

// DescribeConfigs v1 is Apache Kafka 4's minimum.
func init() { reg(32, 1, 4, (*Broker).handleDescribeConfigs) }

func (b *Broker) handleDescribeConfigs(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	im := b.Controller.Image()
	opts := describeOpts{synonyms: req.IncludeSynonyms, docs: req.IncludeDocumentation}
	for _, rr := range req.Resources {
		res := kmsg.NewDescribeConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		configs, e := b.describeResource(im, rr, opts)
		if e != nil {
			res.ErrorCode, res.ErrorMessage = e.code, e.message()
			res.Configs = []kmsg.DescribeConfigsResponseResourceConfig{}
		} else {
			res.Configs = configs
		}
		resp.Resources = append(resp.Resources, res)
	}
	return protocol.Reply{Resp: resp}
}

type describeOpts struct {
	synonyms, docs bool
}

func (b *Broker) describeResource(im *controller.Image, rr kmsg.DescribeConfigsRequestResource, opts describeOpts) ([]kmsg.DescribeConfigsResponseResourceConfig, *apiError) {
	// Null or empty ConfigNames asks for every config.
	wanted := func(string) bool { return true }
	if len(rr.ConfigNames) > 0 {
		set := make(map[string]bool, len(rr.ConfigNames))
		for _, n := range rr.ConfigNames {
			set[n] = true
		}
		wanted = func(n string) bool { return set[n] }
	}
	switch rr.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		name := rr.ResourceName
		if err := controller.ValidateTopicName(name); err != nil {
			return nil, newAPIError(kerr.InvalidTopicException, err.Error())
		}
		if _, ok := im.Topic(name); !ok {
			return nil, &apiError{code: kerr.UnknownTopicOrPartition.Code}
		}
		return b.describeTopicConfigs(im, name, wanted, opts), nil
	case kmsg.ConfigResourceTypeBroker:
		if rr.ResourceName == "" {
			// The cluster-wide default resource lists dynamic defaults
			// only; Gregor's broker settings all come from broker.toml.
			return []kmsg.DescribeConfigsResponseResourceConfig{}, nil
		}
		if e := b.checkNodeID(rr.ResourceName, "Broker id"); e != nil {
			return nil, e
		}
		return b.describeBrokerConfigs(wanted, opts), nil
	case kmsg.ConfigResourceTypeBrokerLogger:
		if rr.ResourceName == "" {
			return nil, newAPIError(kerr.InvalidRequest, "Broker id must not be empty")
		}
		if e := b.checkNodeID(rr.ResourceName, "Broker id"); e != nil {
			return nil, e
		}
		// Gregor has no per-logger levels to list or change.
		return []kmsg.DescribeConfigsResponseResourceConfig{}, nil
	}
	return nil, newAPIError(kerr.InvalidRequest, "Unsupported resource type: "+itoa(int64(rr.ResourceType)))
}

// describeTopicConfigs lists a topic's effective configs with Kafka's
// sources: DYNAMIC_TOPIC_CONFIG for an override, STATIC_BROKER_CONFIG for a
// broker.toml setting that differs from the default, DEFAULT_CONFIG
// otherwise.
func (b *Broker) describeTopicConfigs(im *controller.Image, topic string, wanted func(string) bool, opts describeOpts) []kmsg.DescribeConfigsResponseResourceConfig {
	overrides := im.TopicConfig(topic)
	eff := b.TopicConfig(im, topic)
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, def := range config.TopicConfigDefs() {
		if !wanted(def.Name) {
			continue
		}
		var syns []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
		if v, ok := overrides[def.Name]; ok {
			syns = append(syns, synonym(def.Name, v, kmsg.ConfigSourceDynamicTopicConfig, def.Sensitive))
		}
		if def.BrokerSynonym != "" {
			syns = append(syns, b.staticSynonyms(def.BrokerSynonym, def.BrokerDefault(&b.Config), def.BrokerDefault(&defaultConfig), def.Sensitive)...)
		}
		c := configEntry(def.Name, eff[def.Name], def.Type, def.Doc, def.Sensitive, syns, opts)
		out = append(out, c)
	}
	return out
}

// describeBrokerConfigs lists this broker's settings under Kafka's names.
// None can be changed while the broker runs, so all are read-only.
func (b *Broker) describeBrokerConfigs(wanted func(string) bool, opts describeOpts) []kmsg.DescribeConfigsResponseResourceConfig {
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, bc := range brokerConfigs() {
		if !wanted(bc.name) {
			continue
		}
		cur := bc.value(&b.Config)
		syns := b.staticSynonyms(bc.name, cur, bc.value(&defaultConfig), bc.sensitive)
		c := configEntry(bc.name, cur, bc.typ, bc.doc, bc.sensitive, syns, opts)
		c.ReadOnly = true
		out = append(out, c)
	}
	return out
}

// staticSynonyms gives a broker-level setting's synonyms in Kafka's order of
// precedence: the broker.toml value when it differs from the default, then
// the default.
func (b *Broker) staticSynonyms(name, current, def string, sensitive bool) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	if current != def {
		out = append(out, synonym(name, current, kmsg.ConfigSourceStaticBrokerConfig, sensitive))
	}
	return append(out, synonym(name, def, kmsg.ConfigSourceDefaultConfig, sensitive))
}

func synonym(name, value string, source kmsg.ConfigSource, sensitive bool) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name, s.Source = name, source
	if !sensitive {
		s.Value = strPtr(value)
	}
	return s
}

// configEntry builds one described config. Its source is that of its first
// synonym; the synonyms themselves are sent only when asked for.
func configEntry(name, value, typ, doc string, sensitive bool, syns []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym, opts describeOpts) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name = name
	if !sensitive {
		c.Value = strPtr(value)
	}
	c.IsSensitive = sensitive
	c.Source = kmsg.ConfigSourceDefaultConfig
	if len(syns) > 0 {
		c.Source = syns[0].Source
	}
	c.IsDefault = c.Source == kmsg.ConfigSourceDefaultConfig
	c.ConfigSynonyms = []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{}
	if opts.synonyms && syns != nil {
		c.ConfigSynonyms = syns
	}
	c.ConfigType = configType(typ)
	if opts.docs && doc != "" {
		c.Documentation = strPtr(doc)
	}
	return c
}

// configType maps a config's value type to DescribeConfigs' ConfigType.
func configType(typ string) kmsg.ConfigType {
	switch typ {
	case config.TypeBoolean:
		return kmsg.ConfigTypeBoolean
	case config.TypeString:
		return kmsg.ConfigTypeString
	case config.TypeInt:
		return kmsg.ConfigTypeInt
	case config.TypeLong:
		return kmsg.ConfigTypeLong
	case config.TypeDouble:
		return kmsg.ConfigTypeDouble
	case config.TypeList:
		return kmsg.ConfigTypeList
	}
	return kmsg.ConfigTypeUnknown
}

// brokerConfig is one broker-level setting exposed under its Kafka name.
type brokerConfig struct {
	name, typ, doc string
	sensitive      bool
	// value is the setting's value under a configuration.
	value func(c *config.Config) string
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
		byName[def.BrokerSynonym] = brokerConfig{
			name: def.BrokerSynonym, typ: def.Type, doc: def.Doc, sensitive: def.Sensitive,
			value: def.BrokerDefault,
		}
	}
	for _, bc := range []brokerConfig{
		{name: "node.id", typ: config.TypeInt, doc: "The id of this node in the cluster.",
			value: func(c *config.Config) string { return itoa(int64(c.NodeID)) }},
		{name: "broker.id", typ: config.TypeInt, doc: "The id of this broker; the same as node.id.",
			value: func(c *config.Config) string { return itoa(int64(c.NodeID)) }},
		{name: "process.roles", typ: config.TypeList, doc: "The roles this node plays: every Gregor node is a broker and a metadata controller.",
			value: func(*config.Config) string { return "broker,controller" }},
		{name: "log.dirs", typ: config.TypeString, doc: "The directory holding the partition logs and the metadata log (data_dir in broker.toml).",
			value: func(c *config.Config) string { return c.DataDir }},
		{name: "listeners", typ: config.TypeString, doc: "The address the Kafka protocol listener binds (listeners.kafka in broker.toml).",
			value: func(c *config.Config) string { return "PLAINTEXT://" + c.Listeners.Kafka }},
		{name: "advertised.listeners", typ: config.TypeString, doc: "The address clients are told to connect to (listeners.kafka_advertised in broker.toml).",
			value: func(c *config.Config) string { return "PLAINTEXT://" + c.AdvertisedKafka() }},
		{name: "num.partitions", typ: config.TypeInt, doc: "The number of partitions of a topic created without an explicit count.",
			value: func(c *config.Config) string { return itoa(int64(c.Topics.DefaultPartitions)) }},
		{name: "default.replication.factor", typ: config.TypeInt, doc: "The replication factor of a topic created without an explicit one.",
			value: func(c *config.Config) string { return itoa(int64(c.Topics.DefaultReplicationFactor)) }},
		{name: "auto.create.topics.enable", typ: config.TypeBoolean, doc: "Whether a Metadata request for an unknown topic creates it.",
			value: func(c *config.Config) string { return strconv.FormatBool(c.Topics.AutoCreate) }},
		{name: "log.retention.check.interval.ms", typ: config.TypeLong, doc: "How often the broker checks whether any segment may be deleted under the retention policy.",
			value: func(c *config.Config) string { return itoa(c.Log.RetentionCheckIntervalMs) }},
		{name: "socket.request.max.bytes", typ: config.TypeInt, doc: "The largest request the broker reads.",
			value: func(c *config.Config) string { return itoa(int64(c.Limits.MaxRequestBytes)) }},
		{name: "max.connections", typ: config.TypeInt, doc: "The most client connections the broker accepts at once.",
			value: func(c *config.Config) string {
				if c.Limits.MaxConnections == 0 {
					return itoa(1<<31 - 1)
				}
				return itoa(int64(c.Limits.MaxConnections))
			}},
	} {
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
