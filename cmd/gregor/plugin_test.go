package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

func TestPluginTestPlacesLikeBuiltin(t *testing.T) {
	wasm := hookstest.BuildGo(t, "../../hooks/testdata/murmur")
	keys := []string{"21", "foobar", "abc", "", "a-little-bit-long-string"}
	for i := 0; i < 2500; i++ {
		keys = append(keys, fmt.Sprint("key-", i))
	}
	code, out, errOut := runCapture(t, strings.Join(keys, "\n")+"\n", "plugin", "test", "--wasm", wasm, "--partitions", "64", "--batch", "1000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(keys) {
		t.Fatalf("%d lines for %d keys", len(lines), len(keys))
	}
	for i, k := range keys {
		want := fmt.Sprintf("%s\t%d", k, partitioner.KeyPartition([]byte(k), 64))
		if lines[i] != want {
			t.Fatalf("line %d: %q, want %q", i, lines[i], want)
		}
	}
}

func TestPluginInspect(t *testing.T) {
	wasm := hookstest.BuildGo(t, "../../hooks/testdata/murmur")
	code, out, errOut := runCapture(t, "", "plugin", "inspect", wasm)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"abi version:   2", "kinds:         partitioner", "record fields: key", "gregor_partition(i32,i32,i32,i32) -> i32", "wasi_snapshot_preview1."} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
}

func TestPluginBench(t *testing.T) {
	wasm := hookstest.BuildGo(t, "../../hooks/testdata/murmur")
	code, out, errOut := runCapture(t, "", "plugin", "bench", "--wasm", wasm, "--records", "2000", "--batches", "1,500")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "MODULE ns/record") || strings.Count(out, "\n") != 3 {
		t.Fatalf("bench output:\n%s", out)
	}
}

func TestPluginErrors(t *testing.T) {
	notWasm := filepath.Join(t.TempDir(), "x.wasm")
	if err := os.WriteFile(notWasm, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no wasm", []string{"plugin", "test", "--partitions", "3"}, exitUsage, "--wasm is required"},
		{"no partitions", []string{"plugin", "test", "--wasm", notWasm}, exitUsage, "--partitions"},
		{"bad header", []string{"plugin", "test", "--wasm", notWasm, "--partitions", "3", "--header", "nokey"}, exitUsage, "KEY=VALUE"},
		{"bad config", []string{"plugin", "test", "--wasm", notWasm, "--partitions", "3", "--config", "[1]"}, exitUsage, "JSON object"},
		{"not wasm", []string{"plugin", "test", "--wasm", notWasm, "--partitions", "3"}, exitError, "not a WebAssembly module"},
		{"inspect not wasm", []string{"plugin", "inspect", notWasm}, exitError, "not a WebAssembly module"},
		{"inspect missing", []string{"plugin", "inspect", notWasm + ".absent"}, exitError, "no such file"},
		{"bench bad batch", []string{"plugin", "bench", "--wasm", notWasm, "--batches", "0"}, exitUsage, "batch size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCapture(t, "k\n", tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}
