package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/config"
)

// TestMirrorInsideBroker runs a mirror from a [mirror.NAME] section of the
// target broker's configuration, with no target.bootstrap (the broker
// itself): records and topic configs reach it.
func TestMirrorInsideBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	east := startBroker(t, fastLog)
	retention := "123456789"
	createTopic(t, east.Addr, "orders", 3, map[string]*string{"retention.ms": &retention})
	produceMirrorRecords(t, east.Addr, "orders", 0, 300)
	west := startBroker(t, fastLog, func(c *config.Config) {
		c.Mirrors = map[string]config.MirrorTable{"from-east": {
			"source": map[string]any{"name": "east", "bootstrap": []any{east.Addr}},
			"target": map[string]any{"name": "west"},
			"topics": map[string]any{"include": []any{"orders"}},
			"mirror": map[string]any{"refresh_interval_ms": int64(300), "checkpoint_interval_ms": int64(300)},
		}}
	})
	waitMirrored(t, west.Addr, "east.orders", endOffsets(t, east.Addr, "orders"), 30*time.Second)
	adm := newAdmin(t, west.Addr)
	eventually(t, 10*time.Second, "retention.ms synced", func() error {
		rcs, err := adm.DescribeTopicConfigs(context.Background(), "east.orders")
		if err != nil {
			return err
		}
		rc, err := rcs.On("east.orders", nil)
		if err != nil {
			return err
		}
		for _, c := range rc.Configs {
			if c.Key == "retention.ms" && c.Value != nil && *c.Value == retention {
				return nil
			}
		}
		return fmt.Errorf("retention.ms not %s on the target", retention)
	})
}

// TestMirrorSectionRejected checks that a bad [mirror.NAME] key stops the
// broker at construction with the key named.
func TestMirrorSectionRejected(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = ""
	cfg.Mirrors = map[string]config.MirrorTable{"dr": {
		"source": map[string]any{"name": "east", "bootstrap": []any{"127.0.0.1:1"}},
		"target": map[string]any{"name": "west"},
		"topics": map[string]any{"renam": "x"},
	}}
	_, err := newServer(t, cfg)
	if err == nil || !containsAll(err.Error(), "mirror.dr.topics.renam") {
		t.Fatalf("server.New error = %v, want the unknown key named", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
