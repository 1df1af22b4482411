package config

import (
	"strings"
	"testing"
)

func TestMirrorSectionsKeptAsTables(t *testing.T) {
	cfg, err := Parse(`
[mirror.dr.source]
name = "east"
bootstrap = ["east-1:9092"]
[mirror.dr.mirror]
mode = "link"
`)
	if err != nil {
		t.Fatal(err)
	}
	dr, ok := cfg.Mirrors["dr"]
	if !ok {
		t.Fatalf("mirrors = %v", cfg.Mirrors)
	}
	src, _ := dr["source"].(map[string]any)
	if src["name"] != "east" {
		t.Fatalf("source = %v", dr["source"])
	}
	if _, err := Parse("[mirror]\nmode = \"copy\"\n"); err == nil || !strings.Contains(err.Error(), "mirror") {
		t.Fatalf("a [mirror] table that is not [mirror.NAME] was accepted: %v", err)
	}
}
