package controller

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/hashicorp/raft"
)

func str(s string) *string { return &s }

func TestAlterConfigs(t *testing.T) {
	c := newCluster(t, 1)
	ctx := context.Background()
	mustCreate(t, c, CreateTopic{Name: "t", NumPartitions: 1, ReplicationFactor: 1,
		Configs: map[string]string{"retention.ms": "1000", "segment.bytes": "100000"}})
	topic := ConfigResource{Type: ResourceTopic, Name: "t"}

	// Steps run in order against the same topic; want is its explicit
	// config set afterwards.
	steps := []struct {
		name    string
		req     AlterConfig
		wantErr error
		want    map[string]string
	}{
		{"set and delete", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "retention.ms", Value: str("2000"), Op: OpSet},
			{Name: "segment.bytes", Op: OpDelete},
		}}, nil, map[string]string{"retention.ms": "2000"}},
		{"append to default", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "cleanup.policy", Value: str("compact"), Op: OpAppend},
		}}, nil, map[string]string{"retention.ms": "2000", "cleanup.policy": "delete,compact"}},
		{"append present is a no-op", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "cleanup.policy", Value: str("delete"), Op: OpAppend},
		}}, nil, map[string]string{"retention.ms": "2000", "cleanup.policy": "delete,compact"}},
		{"subtract", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "cleanup.policy", Value: str("delete"), Op: OpSubtract},
		}}, nil, map[string]string{"retention.ms": "2000", "cleanup.policy": "compact"}},
		{"subtract to empty is invalid", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "cleanup.policy", Value: str("compact"), Op: OpSubtract},
		}}, ErrInvalidConfig, map[string]string{"retention.ms": "2000", "cleanup.policy": "compact"}},
		{"append to non-list", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "retention.ms", Value: str("1"), Op: OpAppend},
		}}, ErrInvalidConfig, nil},
		{"invalid value", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "retention.ms", Value: str("-7"), Op: OpSet},
		}}, ErrInvalidConfig, nil},
		{"unknown name", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "retention.minutes", Value: str("1"), Op: OpSet},
		}}, ErrInvalidConfig, nil},
		{"set without value", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "retention.ms", Op: OpSet},
		}}, ErrInvalidRequest, nil},
		{"duplicate key", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "retention.ms", Value: str("1"), Op: OpSet},
			{Name: "retention.ms", Value: str("2"), Op: OpSet},
		}}, ErrInvalidRequest, nil},
		{"unknown op", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "retention.ms", Value: str("1"), Op: 9},
		}}, ErrInvalidRequest, nil},
		{"lag order checked on the result", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "min.compaction.lag.ms", Value: str("10"), Op: OpSet},
			{Name: "max.compaction.lag.ms", Value: str("5"), Op: OpSet},
		}}, ErrInvalidConfig, nil},
		{"replace", AlterConfig{Resource: topic, Replace: true, Ops: []ConfigOp{
			{Name: "max.message.bytes", Value: str("500"), Op: OpSet},
			{Name: "preallocate", Value: nil, Op: OpSet},
		}}, nil, map[string]string{"max.message.bytes": "500"}},
		{"replace rejects other ops", AlterConfig{Resource: topic, Replace: true, Ops: []ConfigOp{
			{Name: "max.message.bytes", Op: OpDelete},
		}}, ErrInvalidRequest, nil},
		{"replace validates", AlterConfig{Resource: topic, Replace: true, Ops: []ConfigOp{
			{Name: "bogus", Value: str("1"), Op: OpSet},
		}}, ErrInvalidConfig, nil},
		{"delete all", AlterConfig{Resource: topic, Ops: []ConfigOp{
			{Name: "max.message.bytes", Op: OpDelete},
		}}, nil, map[string]string{}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := c.Image().TopicConfig("t")
			res := c.AlterConfigs(ctx, []AlterConfig{st.req}, false)
			if res[0].Resource != topic {
				t.Fatalf("result resource %+v", res[0].Resource)
			}
			if st.wantErr != nil {
				if !errors.Is(res[0].Err, st.wantErr) {
					t.Fatalf("err = %v, want %v", res[0].Err, st.wantErr)
				}
				if got := c.Image().TopicConfig("t"); !maps.Equal(got, before) {
					t.Fatalf("failed alter changed configs: %v -> %v", before, got)
				}
				return
			}
			if res[0].Err != nil {
				t.Fatal(res[0].Err)
			}
			if got := c.Image().TopicConfig("t"); !maps.Equal(got, st.want) {
				t.Fatalf("configs = %v, want %v", got, st.want)
			}
		})
	}
	if _, ok := c.Image().Configs[topic]; ok {
		t.Error("an empty config set must leave no entry in the image")
	}
}

func TestAlterConfigsResources(t *testing.T) {
	c := newCluster(t, 1)
	ctx := context.Background()
	mustCreate(t, c, CreateTopic{Name: "t", NumPartitions: 1, ReplicationFactor: 1})
	set := func(name, v string) []ConfigOp { return []ConfigOp{{Name: name, Value: str(v), Op: OpSet}} }
	tests := []struct {
		name    string
		req     AlterConfig
		wantErr error
	}{
		{"cluster default", AlterConfig{Resource: ConfigResource{ResourceBroker, ""}, Ops: set("log.retention.ms", "5000")}, nil},
		{"one broker", AlterConfig{Resource: ConfigResource{ResourceBroker, "1"}, Ops: set("message.max.bytes", "2000000")}, nil},
		{"broker takes topic names no", AlterConfig{Resource: ConfigResource{ResourceBroker, "1"}, Ops: set("retention.ms", "1")}, ErrInvalidConfig},
		{"broker bad value", AlterConfig{Resource: ConfigResource{ResourceBroker, ""}, Ops: set("log.retention.ms", "x")}, ErrInvalidConfig},
		{"broker bad name", AlterConfig{Resource: ConfigResource{ResourceBroker, "one"}, Ops: set("log.retention.ms", "1")}, ErrInvalidRequest},
		{"throttle rate on one broker", AlterConfig{Resource: ConfigResource{ResourceBroker, "1"}, Ops: set("leader.replication.throttled.rate", "102400")}, nil},
		{"throttle rate cluster-wide", AlterConfig{Resource: ConfigResource{ResourceBroker, ""}, Ops: set("follower.replication.throttled.rate", "0")}, nil},
		{"negative throttle rate", AlterConfig{Resource: ConfigResource{ResourceBroker, "1"}, Ops: set("follower.replication.throttled.rate", "-1")}, ErrInvalidConfig},
		{"throttle rate is no topic config", AlterConfig{Resource: ConfigResource{ResourceTopic, "t"}, Ops: set("leader.replication.throttled.rate", "1")}, ErrInvalidConfig},
		{"throttled replicas", AlterConfig{Resource: ConfigResource{ResourceTopic, "t"}, Ops: set("leader.replication.throttled.replicas", "0:1,0:2")}, nil},
		{"throttled replicas malformed", AlterConfig{Resource: ConfigResource{ResourceTopic, "t"}, Ops: set("follower.replication.throttled.replicas", "0-1")}, ErrInvalidConfig},
		{"unknown topic", AlterConfig{Resource: ConfigResource{ResourceTopic, "nope"}, Ops: set("retention.ms", "1")}, ErrUnknownTopic},
		{"unsupported type", AlterConfig{Resource: ConfigResource{Type: 8, Name: "x"}, Ops: set("a", "b")}, ErrInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := c.AlterConfigs(ctx, []AlterConfig{tc.req}, false)[0]
			if (tc.wantErr == nil) != (res.Err == nil) || (tc.wantErr != nil && !errors.Is(res.Err, tc.wantErr)) {
				t.Fatalf("err = %v, want %v", res.Err, tc.wantErr)
			}
			if tc.wantErr == nil {
				op := tc.req.Ops[0]
				if got := c.Image().Configs[tc.req.Resource][op.Name]; got != *op.Value {
					t.Fatalf("%s = %q", op.Name, got)
				}
			}
		})
	}

	// Duplicate resources fail; validateOnly changes nothing.
	r := ConfigResource{ResourceTopic, "t"}
	res := c.AlterConfigs(ctx, []AlterConfig{{Resource: r, Ops: set("retention.ms", "1")}, {Resource: r, Ops: set("retention.ms", "2")}}, false)
	if !errors.Is(res[0].Err, ErrInvalidRequest) || !errors.Is(res[1].Err, ErrInvalidRequest) {
		t.Fatalf("duplicate resources: %v, %v", res[0].Err, res[1].Err)
	}
	res = c.AlterConfigs(ctx, []AlterConfig{{Resource: r, Ops: set("retention.ms", "1")}}, true)
	if res[0].Err != nil || c.Image().TopicConfig("t")["retention.ms"] != "" {
		t.Fatalf("validateOnly: %v, configs %v", res[0].Err, c.Image().TopicConfig("t"))
	}
}

// TestDynamicBrokerConfigsSurviveRestart: throttle rates set on a broker
// and cluster-wide are committed to the metadata log, kept in a snapshot,
// and replayed (snapshot plus the log after it) when the controller opens
// again.
func TestDynamicBrokerConfigsSurviveRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Tune = func(rc *raft.Config) { rc.TrailingLogs = 0 }
	c := newClusterOn(t, openReady(t, cfg))
	ctx := context.Background()
	set := func(res ConfigResource, name, v string) {
		t.Helper()
		if r := c.AlterConfigs(ctx, []AlterConfig{{Resource: res, Ops: []ConfigOp{{Name: name, Value: str(v), Op: OpSet}}}}, false)[0]; r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	set(ConfigResource{ResourceBroker, "1"}, "leader.replication.throttled.rate", "102400")
	if err := c.raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	set(ConfigResource{ResourceBroker, ""}, "follower.replication.throttled.rate", "204800")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2 := openReady(t, cfg)
	im := c2.Image()
	if got := im.BrokerConfig("1"); !maps.Equal(got, map[string]string{"leader.replication.throttled.rate": "102400"}) {
		t.Errorf("broker 1 after restart: %v", got)
	}
	if got := im.BrokerConfig(""); !maps.Equal(got, map[string]string{"follower.replication.throttled.rate": "204800"}) {
		t.Errorf("cluster default after restart: %v", got)
	}
	if got := im.BrokerConfig("2"); got == nil || len(got) != 0 {
		t.Errorf("broker 2: %v, want an empty map", got)
	}
}

func TestEditList(t *testing.T) {
	tests := []struct {
		list, v string
		add     bool
		want    string
	}{
		{"delete", "compact", true, "delete,compact"},
		{"delete", "delete", true, "delete"},
		{"", "a, b", true, "a,b"},
		{"a,b,c", "b", false, "a,c"},
		{"a,b", "x", false, "a,b"},
		{" a , b ", "a", false, "b"},
	}
	for _, tc := range tests {
		if got := editList(tc.list, tc.v, tc.add); got != tc.want {
			t.Errorf("editList(%q, %q, %v) = %q, want %q", tc.list, tc.v, tc.add, got, tc.want)
		}
	}
}
