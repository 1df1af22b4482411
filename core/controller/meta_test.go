package controller

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMetaProperties(t *testing.T) {
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	dir := t.TempDir()
	id, err := loadOrCreateMeta(dir, 3, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != 22 {
		t.Errorf("generated cluster id %q is not Kafka's 22-character form", id)
	}
	data, _ := os.ReadFile(filepath.Join(dir, metaFile))
	for _, want := range []string{"cluster.id=" + id, "node.id=3", "version=1", "#Mon, 06 May 2024 07:08:09 UTC"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("meta.properties lacks %q:\n%s", want, data)
		}
	}
	if again, err := loadOrCreateMeta(dir, 3, "", now); err != nil || again != id {
		t.Fatalf("reload = %q, %v", again, err)
	}
	if again, err := loadOrCreateMeta(dir, 3, id, now); err != nil || again != id {
		t.Fatalf("reload with matching id = %q, %v", again, err)
	}
	if _, err := loadOrCreateMeta(dir, 3, "other", now); err == nil {
		t.Error("a different configured cluster id was accepted")
	}
	if _, err := loadOrCreateMeta(dir, 4, "", now); err == nil {
		t.Error("a different node id was accepted")
	}

	fixed := t.TempDir()
	if got, err := loadOrCreateMeta(fixed, 1, "my-cluster", now); err != nil || got != "my-cluster" {
		t.Fatalf("configured id: %q, %v", got, err)
	}
	if _, err := loadOrCreateMeta(t.TempDir(), 1, "bad\nid", now); err == nil {
		t.Error("a cluster id with a newline was accepted")
	}
}

func TestMetaPropertiesCorrupt(t *testing.T) {
	tests := map[string]string{
		"no equals":     "cluster.id\nnode.id=1\nversion=1\n",
		"wrong version": "cluster.id=abc\nnode.id=1\nversion=0\n",
		"no cluster":    "node.id=1\nversion=1\n",
		"bad node":      "cluster.id=abc\nnode.id=x\nversion=1\n",
	}
	for name, body := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, metaFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadOrCreateMeta(dir, 1, "", time.Now()); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
}

func TestOpenRejectsForeignDir(t *testing.T) {
	dir := t.TempDir()
	c := openReady(t, testConfig(t, dir))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, dir)
	cfg.NodeID = 2
	if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "node id") {
		t.Fatalf("Open with another node id: %v", err)
	}
	cfg = testConfig(t, dir)
	cfg.ClusterID = "someone-else"
	if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "cluster id") {
		t.Fatalf("Open with another cluster id: %v", err)
	}
	noDefaults := testConfig(t, t.TempDir())
	noDefaults.Broker.Topics.DefaultPartitions = 0
	for _, bad := range []Config{{NodeID: -1, Dir: dir}, {NodeID: 1}, noDefaults} {
		if _, err := Open(bad); err == nil {
			t.Errorf("Open(%+v) succeeded", bad)
		}
	}
}
