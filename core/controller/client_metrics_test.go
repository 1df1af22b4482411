package controller

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/hashicorp/raft"
)

func TestClientMetricsSubscriptions(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Tune = func(rc *raft.Config) { rc.TrailingLogs = 0 }
	c := newClusterOn(t, openReady(t, cfg))
	ctx := context.Background()
	sub := ConfigResource{Type: ResourceClientMetrics, Name: "java"}
	steps := []struct {
		name    string
		res     ConfigResource
		ops     []ConfigOp
		wantErr error
		want    map[string]string
	}{
		{"create", sub, []ConfigOp{
			{Name: "metrics", Value: str("org.apache.kafka.producer."), Op: OpSet},
			{Name: "interval.ms", Value: str("1000"), Op: OpSet},
			{Name: "match", Value: str("client_software_name=apache-kafka-java,client_id=app-.*"), Op: OpSet},
		}, nil, map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "1000",
			"match": "client_software_name=apache-kafka-java,client_id=app-.*"}},
		{"append a metric", sub, []ConfigOp{{Name: "metrics", Value: str("org.apache.kafka.consumer."), Op: OpAppend}},
			nil, map[string]string{"metrics": "org.apache.kafka.producer.,org.apache.kafka.consumer.", "interval.ms": "1000",
				"match": "client_software_name=apache-kafka-java,client_id=app-.*"}},
		{"interval below 100 ms", sub, []ConfigOp{{Name: "interval.ms", Value: str("99"), Op: OpSet}}, ErrInvalidConfig, nil},
		{"interval above an hour", sub, []ConfigOp{{Name: "interval.ms", Value: str("3600001"), Op: OpSet}}, ErrInvalidConfig, nil},
		{"unknown selector", sub, []ConfigOp{{Name: "match", Value: str("client_rack=a"), Op: OpSet}}, ErrInvalidConfig, nil},
		{"bad pattern", sub, []ConfigOp{{Name: "match", Value: str("client_id=(a"), Op: OpSet}}, ErrInvalidConfig, nil},
		{"selector twice", sub, []ConfigOp{{Name: "match", Value: str("client_id=a,client_id=b"), Op: OpSet}}, ErrInvalidConfig, nil},
		{"unknown config", sub, []ConfigOp{{Name: "retention.ms", Value: str("1"), Op: OpSet}}, ErrInvalidConfig, nil},
		{"no name", ConfigResource{Type: ResourceClientMetrics}, []ConfigOp{{Name: "metrics", Value: str("*"), Op: OpSet}},
			ErrInvalidRequest, nil},
	}
	for _, st := range steps {
		before := c.Image().Configs[st.res]
		res := c.AlterConfigs(ctx, []AlterConfig{{Resource: st.res, Ops: st.ops}}, false)
		if st.wantErr != nil {
			if !errors.Is(res[0].Err, st.wantErr) {
				t.Fatalf("%s: err %v, want %v", st.name, res[0].Err, st.wantErr)
			}
			if got := c.Image().Configs[st.res]; !maps.Equal(got, before) {
				t.Fatalf("%s: a refused change altered the subscription: %v -> %v", st.name, before, got)
			}
			continue
		}
		if res[0].Err != nil {
			t.Fatalf("%s: %v", st.name, res[0].Err)
		}
		if got := c.Image().Configs[st.res]; !maps.Equal(got, st.want) {
			t.Fatalf("%s: %v, want %v", st.name, got, st.want)
		}
	}

	// Durable through a snapshot and a restart.
	if err := c.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	want := c.Image().Configs[sub]
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2 := openReady(t, cfg)
	if got := c2.Image().Configs[sub]; !maps.Equal(got, want) {
		t.Fatalf("after a restart from the snapshot: %v, want %v", got, want)
	}
	// Deleting every config removes the subscription.
	res := c2.AlterConfigs(ctx, []AlterConfig{{Resource: sub, Ops: []ConfigOp{
		{Name: "metrics", Op: OpDelete}, {Name: "interval.ms", Op: OpDelete}, {Name: "match", Op: OpDelete}}}}, false)
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if _, ok := c2.Image().Configs[sub]; ok {
		t.Fatal("the emptied subscription is still listed")
	}
}
