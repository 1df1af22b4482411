package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/plugins"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// buildPlugin builds this example into a temporary directory, as a user
// would with `go build`.
func buildPlugin(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command: %v", err)
		}
	}
	bin := filepath.Join(t.TempDir(), "plugin-retention-groups")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func segments(nexts ...int64) []retention.Segment {
	var segs []retention.Segment
	base := int64(0)
	for _, n := range nexts {
		segs = append(segs, retention.Segment{BaseOffset: base, NextOffset: n, SizeBytes: 100, LargestTimestampMs: 1000 * n})
		base = n
	}
	return segs
}

func TestThroughTheHost(t *testing.T) {
	bin := buildPlugin(t)
	r, err := plugins.OpenRetention(plugins.Config{
		Name:       "keep-for-groups",
		Kind:       sdkplugin.KindRetention,
		Path:       bin,
		ConfigJSON: []byte(`{"groups": ["billing", "audit"], "max_age_ms": 3600000}`),
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	policy := r.Policy()
	gi, ok := policy.(retention.GroupInterest)
	if !ok || !reflect.DeepEqual(gi.Groups(), []string{"billing", "audit"}) {
		t.Fatalf("the policy should ask for its groups; got %v", gi)
	}

	now := int64(301_000) // every segment is minutes old, well within max_age_ms
	tests := []struct {
		name   string
		groups []retention.GroupOffset
		segs   []retention.Segment
		nowMs  int64
		want   int
	}{
		{"nothing committed", nil, segments(100, 200, 300), now, 0},
		{"one group has not committed", []retention.GroupOffset{{Group: "billing", Offset: 250}, {Group: "audit", Offset: -1}}, segments(100, 200, 300), now, 0},
		{"both past the first segment", []retention.GroupOffset{{Group: "billing", Offset: 250}, {Group: "audit", Offset: 120}}, segments(100, 200, 300), now, 1},
		{"both past two", []retention.GroupOffset{{Group: "billing", Offset: 250}, {Group: "audit", Offset: 200}}, segments(100, 200, 300), now, 2},
		{"the active segment stays", []retention.GroupOffset{{Group: "billing", Offset: 300}, {Group: "audit", Offset: 300}}, segments(100, 200, 300), now, 2},
		{"other groups do not count", []retention.GroupOffset{{Group: "billing", Offset: 300}, {Group: "reports", Offset: 300}}, segments(100, 200, 300), now, 0},
		{"old segments go anyway", nil, segments(100, 200, 300), 200*1000 + 3600000 + 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			n, err := policy.DeletableSegments(ctx, retention.Partition{
				Topic: "orders", Segments: tt.segs, LogEndOffset: 300, HighWatermark: 300, Groups: tt.groups, NowMs: tt.nowMs,
			})
			if err != nil || n != tt.want {
				t.Fatalf("n = %d, err %v, want %d", n, err, tt.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	bin := buildPlugin(t)
	tests := []struct{ config, text string }{
		{`{}`, "groups must name at least one consumer group"},
		{`{"groups": [""]}`, "empty name"},
		{`{"groups": ["a"], "max_age_ms": -1}`, "max_age_ms -1 is negative"},
		{`{"group": ["a"]}`, `unknown field "group"`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			r, err := plugins.OpenRetention(plugins.Config{
				Name: "keep", Kind: sdkplugin.KindRetention, Path: bin, ConfigJSON: []byte(tt.config),
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err == nil {
				r.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v, want %q", err, tt.text)
			}
		})
	}
}

func ExamplePolicy_DeletableSegments() {
	p, _ := New(Config{Groups: []string{"billing"}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	n, _ := p.DeletableSegments(context.Background(), retention.Partition{
		Segments: segments(100, 200, 300),
		Groups:   []retention.GroupOffset{{Group: "billing", Offset: 150}},
	})
	fmt.Println(n)
	// Output: 1
}
