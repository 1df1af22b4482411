package mirror

import (
	"path/filepath"
	"testing"
)

// TestExampleConfigs keeps the example mirror configurations valid.
func TestExampleConfigs(t *testing.T) {
	paths, err := filepath.Glob("../examples/mirror-*/mirror.toml")
	if err != nil || len(paths) < 2 {
		t.Fatalf("example configs: %v, %v", paths, err)
	}
	for _, p := range paths {
		if _, err := Load(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
