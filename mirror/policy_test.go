package mirror

import "testing"

func testPolicy(rename string, include, exclude []string) policy {
	cfg := Default()
	cfg.Source = Cluster{Name: "east", Bootstrap: []string{"h:1"}}
	cfg.Target = Cluster{Name: "west", Bootstrap: []string{"h:2"}}
	cfg.Topics.Rename = rename
	if include != nil {
		cfg.Topics.Include = include
	}
	cfg.Topics.Exclude = exclude
	cfg.Groups.Exclude = []string{"tmp-.*"}
	return newPolicy(cfg)
}

func TestTargetTopic(t *testing.T) {
	tests := []struct {
		rename, topic, want string
	}{
		{RenamePrefix, "orders", "east.orders"},
		{RenamePrefix, "orders.v1", "east.orders.v1"},
		{RenamePrefix, "heartbeats", "east.heartbeats"},
		{RenameIdentity, "orders", "orders"},
		{RenameIdentity, "heartbeats", "east.heartbeats"}, // heartbeats always show their path
		{RenameIdentity, "north.heartbeats", "east.north.heartbeats"},
	}
	for _, tt := range tests {
		if got := testPolicy(tt.rename, nil, nil).TargetTopic(tt.topic); got != tt.want {
			t.Errorf("%s: TargetTopic(%q) = %q, want %q", tt.rename, tt.topic, got, tt.want)
		}
	}
}

func TestTopicSkip(t *testing.T) {
	p := testPolicy(RenamePrefix, []string{"orders.*", "pay"}, []string{"orders-tmp.*"})
	fromTarget := map[string]bool{"orders-mirrored": true}
	tests := []struct {
		topic string
		want  string
	}{
		{"orders", ""},
		{"orders.eu", ""},
		{"pay", ""},
		{"payments", skipFilter}, // anchored: "pay" does not match "payments"
		{"orders-tmp1", skipFilter},
		{"__consumer_offsets", skipInternal},
		{"east.checkpoints.internal", skipInternal},
		{"west.offset-syncs.internal", skipInternal},
		{"west.orders", skipCycle},       // came from the target
		{"north.west.orders", skipCycle}, // came from the target through north
		{"orders-mirrored", skipCycle},   // the reverse mirror's syncs name it
		{"heartbeats", ""},               // topology is always mirrored
		{"north.heartbeats", ""},
		{"west.heartbeats", skipCycle},
	}
	for _, tt := range tests {
		if got := p.topicSkip(tt.topic, fromTarget); got != tt.want {
			t.Errorf("topicSkip(%q) = %q, want %q", tt.topic, got, tt.want)
		}
	}
}

func TestGroupSelected(t *testing.T) {
	p := testPolicy(RenamePrefix, nil, nil)
	for g, want := range map[string]bool{"billing": true, "tmp-1": false, "": true} {
		if got := p.groupSelected(g); got != want {
			t.Errorf("groupSelected(%q) = %v, want %v", g, got, want)
		}
	}
}
