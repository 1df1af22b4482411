package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// buildTestPlugin builds the go-plugin test binary, whose partitioner
// places a record by the length of its key.
func buildTestPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testplugin")
	cmd := exec.Command(hookstest.GoTool(), "build", "-o", bin, "../../plugins/testdata/testplugin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build testplugin: %v\n%s", err, out)
	}
	return bin
}

// TestExtensionTestAndBenchBothKinds: `gregor extension test` and `bench`
// run a WebAssembly module and a go-plugin binary alike, and `gregor
// plugin` is the same command.
func TestExtensionTestAndBenchBothKinds(t *testing.T) {
	wasm := hookstest.BuildGo(t, "../../hooks/testdata/murmur")
	bin := buildTestPlugin(t)
	keys := []string{"21", "foobar", "abc", "a-little-bit-long-string"}
	for i := 0; i < 300; i++ {
		keys = append(keys, fmt.Sprint("key-", i))
	}
	for _, tc := range []struct {
		name  string
		flags []string
		place func(key string) int32
	}{
		{"wasm", []string{"--wasm", wasm}, func(k string) int32 { return partitioner.KeyPartition([]byte(k), 16) }},
		{"exec", []string{"--exec", bin}, func(k string) int32 { return int32(len(k) % 16) }},
	} {
		for _, command := range []string{"extension", "plugin"} {
			t.Run(tc.name+"/"+command, func(t *testing.T) {
				args := append([]string{command, "test", "--partitions", "16", "--batch", "100"}, tc.flags...)
				code, out, errOut := runCapture(t, strings.Join(keys, "\n")+"\n", args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				if len(lines) != len(keys) {
					t.Fatalf("%d lines for %d keys", len(lines), len(keys))
				}
				for i, k := range keys {
					if want := fmt.Sprintf("%s\t%d", k, tc.place(k)); lines[i] != want {
						t.Fatalf("line %d: %q, want %q", i, lines[i], want)
					}
				}
				args = append([]string{command, "bench", "--records", "1000", "--batches", "1,100"}, tc.flags...)
				code, out, errOut = runCapture(t, "", args...)
				if code != 0 {
					t.Fatalf("bench: exit %d: %s", code, errOut)
				}
				if !strings.Contains(out, "EXTENSION ns/record") || strings.Count(out, "\n") != 3 {
					t.Fatalf("bench output:\n%s", out)
				}
			})
		}
	}
	code, out, _ := runCapture(t, "", "extension", "--help")
	if code != 0 || !strings.Contains(out, "WebAssembly modules") || !strings.Contains(out, "go-plugin") || !strings.Contains(out, "extension, plugin") {
		t.Fatalf("help (exit %d) does not name both kinds and the alias:\n%s", code, out)
	}
}

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
	if !strings.Contains(out, "EXTENSION ns/record") || strings.Count(out, "\n") != 3 {
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
		{"no extension", []string{"extension", "test", "--partitions", "3"}, exitUsage, "--wasm or --exec is required"},
		{"both kinds", []string{"extension", "test", "--partitions", "3", "--wasm", notWasm, "--exec", notWasm}, exitUsage, "exclude each other"},
		{"arg without exec", []string{"extension", "bench", "--wasm", notWasm, "--arg", "x"}, exitUsage, "only for --exec"},
		{"exec that does not start", []string{"extension", "test", "--partitions", "3", "--exec", notWasm}, exitError, "did not start"},
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
