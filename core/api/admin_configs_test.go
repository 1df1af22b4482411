package api_test

import (
	"errors"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// describeConfigs sends one DescribeConfigs resource and returns its answer.
func (e *adminEnv) describeConfigs(typ kmsg.ConfigResourceType, name string, names []string, synonyms, docs bool) kmsg.DescribeConfigsResponseResource {
	e.t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms, req.IncludeDocumentation = synonyms, docs
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, names
	req.Resources = append(req.Resources, rr)
	resp := e.requestBroker(nil, req).(*kmsg.DescribeConfigsResponse)
	if len(resp.Resources) != 1 {
		e.t.Fatalf("DescribeConfigs answered %d resources, want 1", len(resp.Resources))
	}
	return resp.Resources[0]
}

// overrides returns a topic's DYNAMIC_TOPIC_CONFIG values.
func (e *adminEnv) overrides(topic string) map[string]string {
	e.t.Helper()
	res := e.describeConfigs(kmsg.ConfigResourceTypeTopic, topic, nil, false, false)
	if res.ErrorCode != 0 {
		e.t.Fatalf("describe %s: %v", topic, kerr.ErrorForCode(res.ErrorCode))
	}
	m := map[string]string{}
	for _, c := range res.Configs {
		if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
			m[c.Name] = *c.Value
		}
	}
	return m
}

func findConfig(t *testing.T, cs []kmsg.DescribeConfigsResponseResourceConfig, name string) kmsg.DescribeConfigsResponseResourceConfig {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("config %s not described", name)
	return kmsg.DescribeConfigsResponseResourceConfig{}
}

type wantSynonym struct {
	name, value string
	source      kmsg.ConfigSource
}

func checkSynonyms(t *testing.T, c kmsg.DescribeConfigsResponseResourceConfig, want []wantSynonym) {
	t.Helper()
	var got []wantSynonym
	for _, s := range c.ConfigSynonyms {
		got = append(got, wantSynonym{s.Name, *s.Value, s.Source})
	}
	if len(got) != len(want) {
		t.Errorf("%s synonyms = %v, want %v", c.Name, got, want)
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s synonyms = %v, want %v", c.Name, got, want)
			return
		}
	}
}

func TestDescribeConfigsTopic(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.Log.SegmentBytes = 1 << 20 })
	e.createTopic("described", 1, map[string]*string{"retention.ms": adminStr("1000")})

	res := e.describeConfigs(kmsg.ConfigResourceTypeTopic, "described", nil, true, true)
	adminWantCode(t, "describe", res.ErrorCode, nil)
	if n := len(res.Configs); n != len(config.TopicConfigDefs()) {
		t.Errorf("described %d configs, want all %d topic configs", n, len(config.TopicConfigDefs()))
	}
	tests := []struct {
		name     string
		value    string
		source   kmsg.ConfigSource
		typ      kmsg.ConfigType
		synonyms []wantSynonym
	}{
		// Kafka's log.retention.ms has no default of its own (it lives in
		// log.retention.hours), so no DEFAULT_CONFIG synonym follows.
		{"retention.ms", "1000", kmsg.ConfigSourceDynamicTopicConfig, kmsg.ConfigTypeLong, []wantSynonym{
			{"retention.ms", "1000", kmsg.ConfigSourceDynamicTopicConfig},
		}},
		{"segment.ms", "604800000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeLong, nil},
		{"segment.bytes", "1048576", kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigTypeInt, []wantSynonym{
			{"log.segment.bytes", "1048576", kmsg.ConfigSourceStaticBrokerConfig},
			{"log.segment.bytes", "1073741824", kmsg.ConfigSourceDefaultConfig},
		}},
		{"cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeList, []wantSynonym{
			{"log.cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig},
		}},
		{"max.message.bytes", "1048588", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, []wantSynonym{
			{"message.max.bytes", "1048588", kmsg.ConfigSourceDefaultConfig},
		}},
		{"preallocate", "false", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeBoolean, []wantSynonym{
			{"log.preallocate", "false", kmsg.ConfigSourceDefaultConfig},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := findConfig(t, res.Configs, tt.name)
			if c.Value == nil || *c.Value != tt.value {
				t.Errorf("value = %v, want %s", c.Value, tt.value)
			}
			if c.Source != tt.source {
				t.Errorf("source = %v, want %v", c.Source, tt.source)
			}
			if c.ConfigType != tt.typ {
				t.Errorf("type = %v, want %v", c.ConfigType, tt.typ)
			}
			if c.ReadOnly || c.IsSensitive {
				t.Errorf("read-only %v sensitive %v, want both false", c.ReadOnly, c.IsSensitive)
			}
			if c.Documentation == nil || *c.Documentation == "" {
				t.Errorf("no documentation")
			}
			checkSynonyms(t, c, tt.synonyms)
		})
	}

	t.Run("filtered, without synonyms or documentation", func(t *testing.T) {
		res := e.describeConfigs(kmsg.ConfigResourceTypeTopic, "described", []string{"retention.ms", "no.such.config"}, false, false)
		if len(res.Configs) != 1 || res.Configs[0].Name != "retention.ms" {
			t.Fatalf("configs = %+v, want retention.ms alone", res.Configs)
		}
		c := res.Configs[0]
		if len(c.ConfigSynonyms) != 0 || c.Documentation != nil {
			t.Errorf("synonyms %v documentation %v, want neither", c.ConfigSynonyms, c.Documentation)
		}
		if c.Source != kmsg.ConfigSourceDynamicTopicConfig {
			t.Errorf("source = %v without synonyms, want DYNAMIC_TOPIC_CONFIG", c.Source)
		}
	})

	t.Run("franz-go kadm", func(t *testing.T) {
		rcs, err := e.adm.DescribeTopicConfigs(e.ctx(), "described")
		if err != nil {
			t.Fatal(err)
		}
		rc, err := rcs.On("described", nil)
		if err != nil || rc.Err != nil {
			t.Fatalf("describe: %v %v", err, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key == "retention.ms" && c.MaybeValue() != "1000" {
				t.Errorf("retention.ms = %q, want 1000", c.MaybeValue())
			}
		}
	})
}

func TestDescribeConfigsResources(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.NodeID = 3 })
	tests := []struct {
		name       string
		typ        kmsg.ConfigResourceType
		resource   string
		want       *kerr.Error
		minConfigs int
	}{
		{"unknown topic", kmsg.ConfigResourceTypeTopic, "missing", kerr.UnknownTopicOrPartition, 0},
		{"invalid topic name", kmsg.ConfigResourceTypeTopic, "bad name!", kerr.InvalidTopicException, 0},
		{"empty topic name", kmsg.ConfigResourceTypeTopic, "", kerr.InvalidTopicException, 0},
		{"this broker", kmsg.ConfigResourceTypeBroker, "3", nil, 20},
		{"cluster default", kmsg.ConfigResourceTypeBroker, "", nil, 0},
		{"another broker", kmsg.ConfigResourceTypeBroker, "4", kerr.InvalidRequest, 0},
		{"broker id not a number", kmsg.ConfigResourceTypeBroker, "three", kerr.InvalidRequest, 0},
		{"broker loggers", kmsg.ConfigResourceTypeBrokerLogger, "3", nil, 0},
		{"broker loggers without id", kmsg.ConfigResourceTypeBrokerLogger, "", kerr.InvalidRequest, 0},
		{"unknown resource type", kmsg.ConfigResourceType(99), "x", kerr.InvalidRequest, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.describeConfigs(tt.typ, tt.resource, nil, true, false)
			adminWantCode(t, "describe", res.ErrorCode, tt.want)
			if res.ResourceName != tt.resource || res.ResourceType != tt.typ {
				t.Errorf("answer names %v %q, want %v %q", res.ResourceType, res.ResourceName, tt.typ, tt.resource)
			}
			if len(res.Configs) < tt.minConfigs || (tt.minConfigs == 0 && len(res.Configs) != 0) {
				t.Errorf("%d configs, want at least %d (exactly 0 when 0)", len(res.Configs), tt.minConfigs)
			}
		})
	}

	t.Run("broker settings", func(t *testing.T) {
		res := e.describeConfigs(kmsg.ConfigResourceTypeBroker, "3", nil, true, true)
		tests := []struct {
			name     string
			value    *string // nil: Kafka shows no value
			source   kmsg.ConfigSource
			synonyms []wantSynonym
		}{
			{"node.id", adminStr("3"), kmsg.ConfigSourceStaticBrokerConfig, []wantSynonym{
				{"node.id", "3", kmsg.ConfigSourceStaticBrokerConfig}}},
			{"broker.id", adminStr("3"), kmsg.ConfigSourceStaticBrokerConfig, []wantSynonym{
				{"broker.id", "3", kmsg.ConfigSourceStaticBrokerConfig}, {"broker.id", "-1", kmsg.ConfigSourceDefaultConfig}}},
			{"log.segment.bytes", adminStr("1073741824"), kmsg.ConfigSourceDefaultConfig, []wantSynonym{
				{"log.segment.bytes", "1073741824", kmsg.ConfigSourceDefaultConfig}}},
			{"log.retention.ms", nil, kmsg.ConfigSourceDefaultConfig, nil},
			{"message.max.bytes", adminStr("1048588"), kmsg.ConfigSourceDefaultConfig, []wantSynonym{
				{"message.max.bytes", "1048588", kmsg.ConfigSourceDefaultConfig}}},
			{"num.partitions", adminStr("1"), kmsg.ConfigSourceDefaultConfig, []wantSynonym{
				{"num.partitions", "1", kmsg.ConfigSourceDefaultConfig}}},
			{"auto.create.topics.enable", adminStr("true"), kmsg.ConfigSourceDefaultConfig, []wantSynonym{
				{"auto.create.topics.enable", "true", kmsg.ConfigSourceDefaultConfig}}},
			{"log.dirs", adminStr(e.cfg.DataDir), kmsg.ConfigSourceStaticBrokerConfig, []wantSynonym{
				{"log.dirs", e.cfg.DataDir, kmsg.ConfigSourceStaticBrokerConfig}}},
			// The configured address, not the port it was given.
			{"listeners", adminStr("PLAINTEXT://127.0.0.1:0"), kmsg.ConfigSourceStaticBrokerConfig, []wantSynonym{
				{"listeners", "PLAINTEXT://127.0.0.1:0", kmsg.ConfigSourceStaticBrokerConfig},
				{"listeners", "PLAINTEXT://:9092", kmsg.ConfigSourceDefaultConfig}}},
			{"advertised.listeners", nil, kmsg.ConfigSourceDefaultConfig, nil},
		}
		for _, w := range tests {
			name := w.name
			c := findConfig(t, res.Configs, name)
			if (c.Value == nil) != (w.value == nil) || c.Value != nil && *c.Value != *w.value || c.Source != w.source {
				t.Errorf("%s = %v from %v, want %v from %v", name, c.Value, c.Source, w.value, w.source)
			}
			checkSynonyms(t, c, w.synonyms)
			if !c.ReadOnly {
				t.Errorf("%s is not read-only", name)
			}
			if c.Documentation == nil {
				t.Errorf("%s has no documentation", name)
			}
		}
		for i := 1; i < len(res.Configs); i++ {
			if res.Configs[i-1].Name >= res.Configs[i].Name {
				t.Errorf("configs not sorted or repeated: %s before %s", res.Configs[i-1].Name, res.Configs[i].Name)
			}
		}
	})
}

// alterConfigs sends a legacy AlterConfigs request.
func (e *adminEnv) alterConfigs(validateOnly bool, resources ...kmsg.AlterConfigsRequestResource) []kmsg.AlterConfigsResponseResource {
	e.t.Helper()
	req := kmsg.NewPtrAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	req.Resources = resources
	return e.requestBroker(nil, req).(*kmsg.AlterConfigsResponse).Resources
}

func legacyResource(typ kmsg.ConfigResourceType, name string, kv ...*string) kmsg.AlterConfigsRequestResource {
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for i := 0; i+1 < len(kv); i += 2 {
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = *kv[i], kv[i+1]
		r.Configs = append(r.Configs, c)
	}
	return r
}

func TestAlterConfigs(t *testing.T) {
	e := startAdminBroker(t)
	e.createTopic("legacy", 1, nil)
	topic := func(kv ...*string) kmsg.AlterConfigsRequestResource {
		return legacyResource(kmsg.ConfigResourceTypeTopic, "legacy", kv...)
	}
	s := adminStr
	steps := []struct {
		name         string
		validateOnly bool
		resources    []kmsg.AlterConfigsRequestResource
		want         []*kerr.Error
		mention      string // the error message must name this
		overrides    map[string]string
	}{
		{"set two", false, []kmsg.AlterConfigsRequestResource{topic(s("retention.ms"), s("1000"), s("segment.ms"), s("2000"))},
			[]*kerr.Error{nil}, "", map[string]string{"retention.ms": "1000", "segment.ms": "2000"}},
		{"replace the whole set", false, []kmsg.AlterConfigsRequestResource{topic(s("max.message.bytes"), s("5000"))},
			[]*kerr.Error{nil}, "", map[string]string{"max.message.bytes": "5000"}},
		{"validate only", true, []kmsg.AlterConfigsRequestResource{topic(s("retention.ms"), s("5"))},
			[]*kerr.Error{nil}, "", map[string]string{"max.message.bytes": "5000"}},
		{"invalid value", false, []kmsg.AlterConfigsRequestResource{topic(s("retention.ms"), s("soon"))},
			[]*kerr.Error{kerr.InvalidConfig}, "retention.ms", map[string]string{"max.message.bytes": "5000"}},
		{"unknown config", false, []kmsg.AlterConfigsRequestResource{topic(s("foo.bar"), s("1"))},
			[]*kerr.Error{kerr.InvalidConfig}, "foo.bar", map[string]string{"max.message.bytes": "5000"}},
		{"null value", false, []kmsg.AlterConfigsRequestResource{topic(s("retention.ms"), nil)},
			[]*kerr.Error{kerr.InvalidRequest}, "retention.ms", map[string]string{"max.message.bytes": "5000"}},
		{"duplicate key", false, []kmsg.AlterConfigsRequestResource{topic(s("retention.ms"), s("1"), s("retention.ms"), s("2"))},
			[]*kerr.Error{kerr.InvalidRequest}, "duplicate", map[string]string{"max.message.bytes": "5000"}},
		{"duplicate resource", false, []kmsg.AlterConfigsRequestResource{topic(s("retention.ms"), s("1")), topic()},
			[]*kerr.Error{kerr.InvalidRequest, kerr.InvalidRequest}, "at most once", map[string]string{"max.message.bytes": "5000"}},
		{"unknown topic", false, []kmsg.AlterConfigsRequestResource{legacyResource(kmsg.ConfigResourceTypeTopic, "missing")},
			[]*kerr.Error{kerr.UnknownTopicOrPartition}, "", map[string]string{"max.message.bytes": "5000"}},
		{"default topic resource", false, []kmsg.AlterConfigsRequestResource{legacyResource(kmsg.ConfigResourceTypeTopic, "")},
			[]*kerr.Error{kerr.InvalidRequest}, "", map[string]string{"max.message.bytes": "5000"}},
		{"broker setting", false, []kmsg.AlterConfigsRequestResource{legacyResource(kmsg.ConfigResourceTypeBroker, "1", s("log.retention.ms"), s("1"))},
			[]*kerr.Error{kerr.InvalidRequest}, "log.retention.ms", map[string]string{"max.message.bytes": "5000"}},
		{"broker without changes", false, []kmsg.AlterConfigsRequestResource{legacyResource(kmsg.ConfigResourceTypeBroker, "")},
			[]*kerr.Error{nil}, "", map[string]string{"max.message.bytes": "5000"}},
		{"broker loggers", false, []kmsg.AlterConfigsRequestResource{legacyResource(kmsg.ConfigResourceTypeBrokerLogger, "1")},
			[]*kerr.Error{kerr.InvalidRequest}, "", map[string]string{"max.message.bytes": "5000"}},
		{"clear", false, []kmsg.AlterConfigsRequestResource{topic()},
			[]*kerr.Error{nil}, "", map[string]string{}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got := e.alterConfigs(st.validateOnly, st.resources...)
			if len(got) != len(st.want) {
				t.Fatalf("%d answers, want %d", len(got), len(st.want))
			}
			for i, w := range st.want {
				adminWantCode(t, "resource "+got[i].ResourceName, got[i].ErrorCode, w)
				if w != nil && st.mention != "" && (got[i].ErrorMessage == nil || !strings.Contains(*got[i].ErrorMessage, st.mention)) {
					t.Errorf("message %v does not mention %q", got[i].ErrorMessage, st.mention)
				}
				if w == nil && got[i].ErrorMessage != nil {
					t.Errorf("message %q on success", *got[i].ErrorMessage)
				}
			}
			if o := e.overrides("legacy"); !maps.Equal(o, st.overrides) {
				t.Errorf("overrides = %v, want %v", o, st.overrides)
			}
		})
	}
}

// incremental sends an IncrementalAlterConfigs request.
func (e *adminEnv) incremental(validateOnly bool, resources ...kmsg.IncrementalAlterConfigsRequestResource) []kmsg.IncrementalAlterConfigsResponseResource {
	e.t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	req.Resources = resources
	return e.requestBroker(nil, req).(*kmsg.IncrementalAlterConfigsResponse).Resources
}

type incOp struct {
	op    kmsg.IncrementalAlterConfigOp
	name  string
	value *string
}

func incResource(typ kmsg.ConfigResourceType, name string, ops ...incOp) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = o.name, o.op, o.value
		r.Configs = append(r.Configs, c)
	}
	return r
}

func TestIncrementalAlterConfigs(t *testing.T) {
	e := startAdminBroker(t)
	e.createTopic("inc", 1, nil)
	topic := func(ops ...incOp) kmsg.IncrementalAlterConfigsRequestResource {
		return incResource(kmsg.ConfigResourceTypeTopic, "inc", ops...)
	}
	set := func(k, v string) incOp { return incOp{kmsg.IncrementalAlterConfigOpSet, k, adminStr(v)} }
	del := func(k string) incOp { return incOp{kmsg.IncrementalAlterConfigOpDelete, k, nil} }
	app := func(k, v string) incOp { return incOp{kmsg.IncrementalAlterConfigOpAppend, k, adminStr(v)} }
	sub := func(k, v string) incOp { return incOp{kmsg.IncrementalAlterConfigOpSubtract, k, adminStr(v)} }
	steps := []struct {
		name         string
		validateOnly bool
		resource     kmsg.IncrementalAlterConfigsRequestResource
		want         *kerr.Error
		mention      string
		overrides    map[string]string
	}{
		{"set", false, topic(set("retention.ms", "1000")), nil, "", map[string]string{"retention.ms": "1000"}},
		{"set another, delete one", false, topic(set("segment.ms", "5000"), del("retention.ms")), nil, "",
			map[string]string{"segment.ms": "5000"}},
		{"append to the default list", false, topic(app("cleanup.policy", "compact")), nil, "",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "delete,compact"}},
		{"subtract", false, topic(sub("cleanup.policy", "delete")), nil, "",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"append to a non-list", false, topic(app("retention.ms", "5")), kerr.InvalidConfig, "retention.ms",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"invalid value", false, topic(set("min.insync.replicas", "0")), kerr.InvalidConfig, "min.insync.replicas",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"unknown config", false, topic(set("no.such", "1")), kerr.InvalidConfig, "no.such",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"set without value", false, topic(incOp{kmsg.IncrementalAlterConfigOpSet, "retention.ms", nil}), kerr.InvalidRequest, "retention.ms",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"validate only", true, topic(del("segment.ms")), nil, "",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"unknown topic", false, incResource(kmsg.ConfigResourceTypeTopic, "missing", set("retention.ms", "1")), kerr.UnknownTopicOrPartition, "",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"broker setting", false, incResource(kmsg.ConfigResourceTypeBroker, "", set("log.retention.ms", "1")), kerr.InvalidRequest, "log.retention.ms",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"another broker", false, incResource(kmsg.ConfigResourceTypeBroker, "2"), kerr.InvalidRequest, "2",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"broker logger", false, incResource(kmsg.ConfigResourceTypeBrokerLogger, "1", set("kafka.server", "DEBUG")), kerr.InvalidConfig, "kafka.server",
			map[string]string{"segment.ms": "5000", "cleanup.policy": "compact"}},
		{"delete the rest", false, topic(del("segment.ms"), del("cleanup.policy"), del("not.set")), nil, "", map[string]string{}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got := e.incremental(st.validateOnly, st.resource)
			if len(got) != 1 {
				t.Fatalf("%d answers, want 1", len(got))
			}
			adminWantCode(t, "alter", got[0].ErrorCode, st.want)
			if st.mention != "" && (got[0].ErrorMessage == nil || !strings.Contains(*got[0].ErrorMessage, st.mention)) {
				t.Errorf("message %v does not mention %q", got[0].ErrorMessage, st.mention)
			}
			if o := e.overrides("inc"); !maps.Equal(o, st.overrides) {
				t.Errorf("overrides = %v, want %v", o, st.overrides)
			}
		})
	}

	t.Run("franz-go kadm", func(t *testing.T) {
		rs, err := e.adm.AlterTopicConfigs(e.ctx(), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.bytes", Value: adminStr("4096")}}, "inc")
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Err != nil {
			t.Fatalf("alter: %+v", rs)
		}
		if o := e.overrides("inc"); o["retention.bytes"] != "4096" {
			t.Errorf("overrides = %v, want retention.bytes 4096", o)
		}
	})
}

// TestAlteredConfigReachesPartition checks that a changed topic config
// governs the partition by the time the answer arrives.
func TestAlteredConfigReachesPartition(t *testing.T) {
	e := startAdminBroker(t)
	e.createTopic("limited", 1, nil)
	// Random bytes, so that the client's compression cannot shrink them.
	big := make([]byte, 2000)
	rand.NewChaCha8([32]byte{1}).Read(big)
	produce := func() error {
		return e.cl.ProduceSync(e.ctx(), &kgo.Record{Topic: "limited", Value: big}).FirstErr()
	}
	steps := []struct {
		name string
		op   incOp
		want error
	}{
		{"limit below the record", incOp{kmsg.IncrementalAlterConfigOpSet, "max.message.bytes", adminStr("500")}, kerr.MessageTooLarge},
		{"limit removed", incOp{kmsg.IncrementalAlterConfigOpDelete, "max.message.bytes", nil}, nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got := e.incremental(false, incResource(kmsg.ConfigResourceTypeTopic, "limited", st.op))
			adminWantCode(t, "alter", got[0].ErrorCode, nil)
			if err := produce(); !errors.Is(err, st.want) {
				t.Errorf("produce: %v, want %v", err, st.want)
			}
		})
	}
}
