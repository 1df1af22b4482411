package api

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
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
		var configs []kmsg.DescribeConfigsResponseResourceConfig
		e := b.configResourceDenied(r, sdkauth.OpDescribeConfigs, rr.ResourceType, rr.ResourceName)
		if e == nil {
			configs, e = b.describeResource(im, rr, opts)
		}
		// Kafka sends an empty message, not a null one, when there is none.
		res.ErrorMessage = strPtr("")
		if e != nil {
			res.ErrorCode = e.code
			if m := e.message(); m != nil {
				res.ErrorMessage = m
			}
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
			// The cluster-wide default resource lists the dynamic
			// defaults that are set, and nothing else.
			return b.describeBrokerDefaults(im, wanted, opts), nil
		}
		if e := b.checkNodeID(rr.ResourceName, "Broker id"); e != nil {
			e.msg = strings.Replace(e.msg, ", but received", " or empty string, but received", 1)
			return nil, e
		}
		return b.describeBrokerConfigs(im, wanted, opts), nil
	case kmsg.ConfigResourceTypeGroupConfig:
		return b.describeGroupConfigs(im, rr.ResourceName, wanted, opts)
	case kmsg.ConfigResourceTypeBrokerLogger:
		if rr.ResourceName == "" {
			return nil, newAPIError(kerr.InvalidRequest, "Broker id must not be empty")
		}
		if e := b.checkNodeID(rr.ResourceName, "Broker id"); e != nil {
			return nil, e
		}
		// Gregor has no per-logger levels to list or change.
		return []kmsg.DescribeConfigsResponseResourceConfig{}, nil
	case kmsg.ConfigResourceTypeClientMetrics:
		return b.describeClientMetrics(im, rr.ResourceName, wanted, opts)
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
		if bc, ok := config.BrokerSettingByName()[def.BrokerSynonym]; ok {
			syns = append(syns, brokerSynonyms(bc, &b.Config)...)
		}
		c := configEntry(def.Name, eff[def.Name], def.Type, def.Doc, def.Sensitive, syns, opts)
		out = append(out, c)
	}
	return out
}

// describeBrokerConfigs lists this broker's settings under Kafka's names.
// The dynamic ones (the replication throttle rates) show their value from
// the metadata log; the others come from broker.toml and are read-only.
func (b *Broker) describeBrokerConfigs(im *controller.Image, wanted func(string) bool, opts describeOpts) []kmsg.DescribeConfigsResponseResourceConfig {
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	node := itoa(int64(b.Config.NodeID))
	for _, bc := range config.BrokerSettings() {
		if !wanted(bc.Name) {
			continue
		}
		if bc.Dynamic {
			syns := dynamicSynonyms(bc, im, node)
			out = append(out, configEntry(bc.Name, synonymValue(syns[0]), bc.Type, bc.Doc, bc.Sensitive, syns, opts))
			continue
		}
		v, ok := bc.Value(&b.Config)
		c := configEntry(bc.Name, v, bc.Type, bc.Doc, bc.Sensitive, brokerSynonyms(bc, &b.Config), opts)
		if !ok {
			c.Value = nil
		}
		c.ReadOnly = true
		out = append(out, c)
	}
	return out
}

// describeBrokerDefaults lists the cluster-wide dynamic broker configs that
// are set (the BROKER resource named "").
func (b *Broker) describeBrokerDefaults(im *controller.Image, wanted func(string) bool, opts describeOpts) []kmsg.DescribeConfigsResponseResourceConfig {
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	set := im.BrokerConfig("")
	for _, bc := range config.BrokerSettings() {
		if _, ok := set[bc.Name]; !ok || !bc.Dynamic || !wanted(bc.Name) {
			continue
		}
		syns := dynamicSynonyms(bc, im, "")
		out = append(out, configEntry(bc.Name, synonymValue(syns[0]), bc.Type, bc.Doc, bc.Sensitive, syns, opts))
	}
	return out
}

// synonymValue is a synonym's value, "" for a sensitive one.
func synonymValue(s kmsg.DescribeConfigsResponseResourceConfigConfigSynonym) string {
	if s.Value == nil {
		return ""
	}
	return *s.Value
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
