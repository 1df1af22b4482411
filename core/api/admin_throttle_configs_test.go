package api_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

const maxLongStr = "9223372036854775807"

// TestReplicationThrottleBrokerConfigs: the two replication throttle rates
// are dynamic broker configs, set per broker id or cluster-wide through
// IncrementalAlterConfigs and AlterConfigs and described with Kafka's
// sources; other broker settings stay read-only.
func TestReplicationThrottleBrokerConfigs(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.NodeID = 1 })
	set := func(k, v string) incOp { return incOp{kmsg.IncrementalAlterConfigOpSet, k, adminStr(v)} }
	del := func(k string) incOp { return incOp{kmsg.IncrementalAlterConfigOpDelete, k, nil} }
	app := func(k, v string) incOp { return incOp{kmsg.IncrementalAlterConfigOpAppend, k, adminStr(v)} }
	const leader, follower = "leader.replication.throttled.rate", "follower.replication.throttled.rate"
	broker := func(ops ...incOp) kmsg.IncrementalAlterConfigsRequestResource {
		return incResource(kmsg.ConfigResourceTypeBroker, "1", ops...)
	}
	cluster := func(ops ...incOp) kmsg.IncrementalAlterConfigsRequestResource {
		return incResource(kmsg.ConfigResourceTypeBroker, "", ops...)
	}
	type described struct {
		value    string
		source   kmsg.ConfigSource
		synonyms []wantSynonym
	}
	steps := []struct {
		name     string
		resource kmsg.IncrementalAlterConfigsRequestResource
		want     *kerr.Error
		mention  string
		leader   described
		follower described
		defaults []string // the configs the cluster-wide resource lists
	}{
		{"unset", broker(), nil, "",
			described{maxLongStr, kmsg.ConfigSourceDefaultConfig, []wantSynonym{{leader, maxLongStr, kmsg.ConfigSourceDefaultConfig}}},
			described{maxLongStr, kmsg.ConfigSourceDefaultConfig, []wantSynonym{{follower, maxLongStr, kmsg.ConfigSourceDefaultConfig}}},
			nil},
		{"per broker", broker(set(leader, "102400")), nil, "",
			described{"102400", kmsg.ConfigSourceDynamicBrokerConfig, []wantSynonym{
				{leader, "102400", kmsg.ConfigSourceDynamicBrokerConfig}, {leader, maxLongStr, kmsg.ConfigSourceDefaultConfig}}},
			described{maxLongStr, kmsg.ConfigSourceDefaultConfig, []wantSynonym{{follower, maxLongStr, kmsg.ConfigSourceDefaultConfig}}},
			nil},
		{"cluster-wide under a per-broker value", cluster(set(leader, "500"), set(follower, "204800")), nil, "",
			described{"102400", kmsg.ConfigSourceDynamicBrokerConfig, []wantSynonym{
				{leader, "102400", kmsg.ConfigSourceDynamicBrokerConfig}, {leader, "500", kmsg.ConfigSourceDynamicDefaultBrokerConfig},
				{leader, maxLongStr, kmsg.ConfigSourceDefaultConfig}}},
			described{"204800", kmsg.ConfigSourceDynamicDefaultBrokerConfig, []wantSynonym{
				{follower, "204800", kmsg.ConfigSourceDynamicDefaultBrokerConfig}, {follower, maxLongStr, kmsg.ConfigSourceDefaultConfig}}},
			[]string{follower, leader}},
		{"negative", broker(set(follower, "-1")), kerr.InvalidRequest, "Invalid value -1 for configuration " + follower,
			described{"102400", kmsg.ConfigSourceDynamicBrokerConfig, nil},
			described{"204800", kmsg.ConfigSourceDynamicDefaultBrokerConfig, nil},
			[]string{follower, leader}},
		{"append to a long", broker(app(leader, "1")), kerr.InvalidConfig, "append is not allowed for config key: " + leader,
			described{"102400", kmsg.ConfigSourceDynamicBrokerConfig, nil},
			described{"204800", kmsg.ConfigSourceDynamicDefaultBrokerConfig, nil},
			[]string{follower, leader}},
		{"with a read-only setting", broker(set(follower, "1"), set("num.partitions", "3")), kerr.InvalidRequest, "Cannot update these configs dynamically: num.partitions",
			described{"102400", kmsg.ConfigSourceDynamicBrokerConfig, nil},
			described{"204800", kmsg.ConfigSourceDynamicDefaultBrokerConfig, nil},
			[]string{follower, leader}},
		{"another broker", incResource(kmsg.ConfigResourceTypeBroker, "2", set(leader, "1")), kerr.InvalidRequest, "Unexpected broker id",
			described{"102400", kmsg.ConfigSourceDynamicBrokerConfig, nil},
			described{"204800", kmsg.ConfigSourceDynamicDefaultBrokerConfig, nil},
			[]string{follower, leader}},
		{"delete the per-broker value", broker(del(leader)), nil, "",
			described{"500", kmsg.ConfigSourceDynamicDefaultBrokerConfig, nil},
			described{"204800", kmsg.ConfigSourceDynamicDefaultBrokerConfig, nil},
			[]string{follower, leader}},
		{"delete the cluster-wide values", cluster(del(leader), del(follower)), nil, "",
			described{maxLongStr, kmsg.ConfigSourceDefaultConfig, nil},
			described{maxLongStr, kmsg.ConfigSourceDefaultConfig, nil},
			nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if len(st.resource.Configs) > 0 {
				got := e.incremental(false, st.resource)
				adminWantCode(t, "alter", got[0].ErrorCode, st.want)
				if st.mention != "" && (got[0].ErrorMessage == nil || !strings.Contains(*got[0].ErrorMessage, st.mention)) {
					t.Errorf("message %v does not mention %q", got[0].ErrorMessage, st.mention)
				}
			}
			res := e.describeConfigs(kmsg.ConfigResourceTypeBroker, "1", []string{leader, follower}, true, true)
			adminWantCode(t, "describe", res.ErrorCode, nil)
			if len(res.Configs) != 2 {
				t.Fatalf("%d configs described, want 2", len(res.Configs))
			}
			for name, w := range map[string]described{leader: st.leader, follower: st.follower} {
				c := findConfig(t, res.Configs, name)
				if c.Value == nil || *c.Value != w.value || c.Source != w.source {
					t.Errorf("%s = %v from %v, want %s from %v", name, c.Value, c.Source, w.value, w.source)
				}
				if c.ReadOnly || c.ConfigType != kmsg.ConfigTypeLong || c.Documentation == nil {
					t.Errorf("%s: read-only %v, type %v, doc %v; want writable long with a doc", name, c.ReadOnly, c.ConfigType, c.Documentation)
				}
				if w.synonyms != nil {
					checkSynonyms(t, c, w.synonyms)
				}
			}
			defs := e.describeConfigs(kmsg.ConfigResourceTypeBroker, "", nil, true, false)
			adminWantCode(t, "describe the cluster default", defs.ErrorCode, nil)
			var names []string
			for _, c := range defs.Configs {
				names = append(names, c.Name)
				if c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || c.ReadOnly {
					t.Errorf("cluster default %s: source %v read-only %v", c.Name, c.Source, c.ReadOnly)
				}
			}
			if strings.Join(names, ",") != strings.Join(st.defaults, ",") {
				t.Errorf("cluster default lists %v, want %v", names, st.defaults)
			}
		})
	}

	t.Run("legacy AlterConfigs replaces the broker's set", func(t *testing.T) {
		s := adminStr
		got := e.alterConfigs(false, legacyResource(kmsg.ConfigResourceTypeBroker, "1", s(leader), s("1000"), s(follower), s("2000")))
		adminWantCode(t, "alter", got[0].ErrorCode, nil)
		got = e.alterConfigs(false, legacyResource(kmsg.ConfigResourceTypeBroker, "1", s(follower), s("3000")))
		adminWantCode(t, "alter", got[0].ErrorCode, nil)
		res := e.describeConfigs(kmsg.ConfigResourceTypeBroker, "1", []string{leader, follower}, false, false)
		if l, f := findConfig(t, res.Configs, leader), findConfig(t, res.Configs, follower); *l.Value != maxLongStr || *f.Value != "3000" {
			t.Errorf("after the replacing alter: leader %s, follower %s; want %s, 3000", *l.Value, *f.Value, maxLongStr)
		}
	})

	t.Run("throttled replicas topic configs", func(t *testing.T) {
		e.createTopic("moving", 2, nil)
		topic := func(ops ...incOp) kmsg.IncrementalAlterConfigsRequestResource {
			return incResource(kmsg.ConfigResourceTypeTopic, "moving", ops...)
		}
		got := e.incremental(false, topic(set("leader.replication.throttled.replicas", "0:1,1:1"), set("follower.replication.throttled.replicas", "*")))
		adminWantCode(t, "alter", got[0].ErrorCode, nil)
		got = e.incremental(false, topic(set("follower.replication.throttled.replicas", "0-2")))
		adminWantCode(t, "alter", got[0].ErrorCode, kerr.InvalidConfig)
		o := e.overrides("moving")
		if o["leader.replication.throttled.replicas"] != "0:1,1:1" || o["follower.replication.throttled.replicas"] != "*" {
			t.Errorf("overrides = %v", o)
		}
		res := e.describeConfigs(kmsg.ConfigResourceTypeTopic, "moving", []string{"leader.replication.throttled.replicas"}, false, false)
		if c := findConfig(t, res.Configs, "leader.replication.throttled.replicas"); c.ConfigType != kmsg.ConfigTypeList || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
			t.Errorf("described as type %v from %v, want a list from DYNAMIC_TOPIC_CONFIG", c.ConfigType, c.Source)
		}
	})
}
