package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --partitioner-wasm is checked before any broker is contacted.
func TestProducePartitionerFlags(t *testing.T) {
	dead := closedAddr(t)
	notWasm := filepath.Join(t.TempDir(), "text.wasm")
	if err := os.WriteFile(notWasm, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"help documents it", []string{"produce", "--help"}, exitOK, ""},
		{"with --partition", []string{"produce", "t", "--partition", "1", "--partitioner-wasm", notWasm, "--bootstrap", dead},
			exitUsage, "--partition and --partitioner-wasm exclude each other"},
		{"config not an object", []string{"produce", "t", "--partitioner-wasm", notWasm, "--partitioner-config", "[1]", "--bootstrap", dead},
			exitUsage, `--partitioner-config must be a JSON object, got "[1]"`},
		{"missing file", []string{"produce", "t", "--partitioner-wasm", notWasm + ".nope", "--bootstrap", dead},
			exitError, "--partitioner-wasm " + notWasm + ".nope"},
		{"not WebAssembly", []string{"produce", "t", "--partitioner-wasm", notWasm, "--bootstrap", dead},
			exitError, "not a WebAssembly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCapture(t, "k:v\n", tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr does not contain %q:\n%s", tt.wantStderr, stderr)
			}
			if tt.wantCode == exitOK && !strings.Contains(stdout, "--partitioner-wasm FILE") {
				t.Errorf("help does not document --partitioner-wasm:\n%s", stdout)
			}
		})
	}
}
