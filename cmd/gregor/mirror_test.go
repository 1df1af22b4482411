package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/mirror"
)

func TestMirrorCommandUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("[source]\nname = \"east\"\nbootstrap = [\"h:1\"]\n[target]\nname = \"west\"\nbootstrap = [\"h:2\"]\n[mirror]\nmode = \"mirror\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mirror"}, exitUsage, "--config is required"},
		{[]string{"mirror", "status"}, exitUsage, "--config is required"},
		{[]string{"mirror", "promote", "--config", bad}, exitUsage, "missing TARGET_TOPIC"},
		{[]string{"mirror", "--config", bad}, exitError, "invalid mirror.mode"},
		{[]string{"mirror", "--config", filepath.Join(t.TempDir(), "none.toml")}, exitError, "no such file"},
	}
	for _, tt := range tests {
		var out, errw bytes.Buffer
		code := run(context.Background(), tt.args, strings.NewReader(""), &out, &errw)
		if code != tt.code || !strings.Contains(errw.String(), tt.want) {
			t.Errorf("%v: code %d, stderr %q; want %d and %q", tt.args, code, errw.String(), tt.code, tt.want)
		}
	}
}

func TestPrintMirrorStatus(t *testing.T) {
	st := mirror.ClusterStatus{
		Status: mirror.Status{Name: "east->west", Mode: "copy", Skipped: map[string]string{"__consumer_offsets": "internal topic"},
			Partitions: []mirror.PartitionStatus{
				{Topic: "orders", Partition: 0, TargetTopic: "east.orders", Position: 90, SourceEnd: 100, Lag: 10, State: "mirroring"},
				{Topic: "orders", Partition: 1, TargetTopic: "east.orders", Position: 5, SourceEnd: 5, State: "failing",
					Error: "mirror: write orders[1]: TOPIC_AUTHORIZATION_FAILED", Failures: 3,
					FailedAt: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), RetryAt: time.Date(2026, 1, 2, 3, 4, 8, 0, time.UTC),
					LastWrite: time.Date(2026, 1, 2, 3, 3, 59, 0, time.UTC)},
			}},
		LastHeartbeat: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Promoted:      []string{"east.audit"},
	}
	var out bytes.Buffer
	printMirrorStatus(&out, st)
	for _, want := range []string{"mirror east->west (copy mode)", "last heartbeat: 2026-01-02T03:04:05Z",
		"east.orders", "total lag: 10", "promoted: [east.audit]", "not mirrored: __consumer_offsets (internal topic)", "2026-01-02T03:03:59Z",
		"FAILING orders[1] since 2026-01-02T03:04:00Z (3 failures, retry at 2026-01-02T03:04:08Z): mirror: write orders[1]: TOPIC_AUTHORIZATION_FAILED"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
