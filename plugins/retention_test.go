package plugins

import (
	"context"
	"errors"
	"reflect"
	"testing"

	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/retention"
)

func threeSegments(topic string, groups ...retention.GroupOffset) retention.Partition {
	return retention.Partition{
		Topic: topic, Partition: 0,
		Segments: []retention.Segment{
			{BaseOffset: 0, NextOffset: 100, SizeBytes: 10},
			{BaseOffset: 100, NextOffset: 200, SizeBytes: 10},
			{BaseOffset: 200, NextOffset: 250, SizeBytes: 5},
		},
		LogEndOffset: 250, HighWatermark: 250, Groups: groups,
	}
}

func TestRetentionPlugin(t *testing.T) {
	cfg, _, _ := testConfig(t, sdkplugin.KindRetention, `{"groups": ["billing", "audit"]}`)
	r, err := OpenRetention(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	gi, ok := r.Policy().(retention.GroupInterest)
	if !ok || !reflect.DeepEqual(gi.Groups(), []string{"billing", "audit"}) {
		t.Fatalf("group interest %v (%v)", gi, ok)
	}
	tests := []struct {
		name   string
		groups []retention.GroupOffset
		want   int
	}{
		{"both past two segments", []retention.GroupOffset{{Group: "billing", Offset: 220}, {Group: "audit", Offset: 200}}, 2},
		{"one behind", []retention.GroupOffset{{Group: "billing", Offset: 220}, {Group: "audit", Offset: 150}}, 1},
		{"one never committed", []retention.GroupOffset{{Group: "billing", Offset: 220}, {Group: "audit", Offset: -1}}, 0},
		{"active segment stays", []retention.GroupOffset{{Group: "billing", Offset: 250}, {Group: "audit", Offset: 250}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := r.DeletableSegments(context.Background(), threeSegments("orders", tt.groups...))
			if err != nil || n != tt.want {
				t.Fatalf("n = %d, err %v, want %d", n, err, tt.want)
			}
		})
	}
}

func TestRetentionWithoutGroupInterest(t *testing.T) {
	cfg, _, _ := testConfig(t, sdkplugin.KindRetention, `{}`)
	r, err := OpenRetention(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The test plugin always implements GroupInterest; an empty list is a
	// declaration too.
	if groups, declared := r.DeclaredGroups(); !declared || len(groups) != 0 {
		t.Fatalf("groups %v declared %v", groups, declared)
	}
}

func TestRetentionBadAnswers(t *testing.T) {
	tests := []struct {
		name   string
		topic  string
		want   int
		target error
	}{
		{"out of range", "range", 0, retention.ErrOutOfRange},
		{"error", "error", 0, ErrExtension},
		{"crash", "crash", 0, ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, _ := testConfig(t, sdkplugin.KindRetention, `{}`)
			r, err := OpenRetention(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			n, err := r.DeletableSegments(context.Background(), threeSegments(tt.topic))
			if tt.target != nil {
				if !errors.Is(err, tt.target) {
					t.Fatalf("err = %v, want %v", err, tt.target)
				}
				return
			}
			if err != nil || n != tt.want {
				t.Fatalf("n = %d, err %v, want %d", n, err, tt.want)
			}
		})
	}
}
