package log

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCleanShutdownEpoch: Close records the broker epoch in the
// clean-shutdown marker in Kafka's format, and CleanShutdownEpoch reads it
// back; without a marker, or with one that names no epoch, it is -1.
func TestCleanShutdownEpoch(t *testing.T) {
	e := newEnv(t, tinyConfig())
	fill(t, e.log("t", 0), 3, 1)
	if got := CleanShutdownEpoch(e.path, Options{}); got != -1 {
		t.Fatalf("an open dir (no marker): %d, want -1", got)
	}
	e.dir.SetBrokerEpoch(42)
	if err := e.dir.Close(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(e.path, cleanShutdownFile)
	if b, err := os.ReadFile(marker); err != nil || string(b) != `{"version":0,"brokerEpoch":42}` {
		t.Fatalf("marker %q, %v", b, err)
	}
	if got := CleanShutdownEpoch(e.path, Options{}); got != 42 {
		t.Fatalf("after Close: %d, want 42", got)
	}
	for _, bad := range []string{"", "{", `{"version":1,"brokerEpoch":42}`, `{"version":0}`, `{"version":0,"broker_epoch":42}`} {
		if err := os.WriteFile(marker, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := CleanShutdownEpoch(e.path, Options{}); got != -1 {
			t.Errorf("marker %q: %d, want -1", bad, got)
		}
	}
}
