// Package hookstest builds WebAssembly test modules for Gregor's tests: Go
// guests compiled with GOOS=wasip1 -buildmode=c-shared, and AssemblyScript
// guests through npm. It owns no runtime code; only tests import it.
package hookstest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	built = map[string]string{} // package dir -> wasm path, for the process
)

// GoTool returns the go command of the running toolchain.
func GoTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

// BuildGo compiles the Go guest package in dir to a .wasm file and returns
// its path. Builds are shared within a test process and cached by the go
// build cache across runs. A build failure fails the test.
func BuildGo(tb testing.TB, dir string) string {
	tb.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[abs]; ok {
		return p
	}
	// One stable directory per package, so repeated runs overwrite
	// instead of piling up.
	out := filepath.Join(os.TempDir(), "gregor-hookstest", fmt.Sprintf("%x", sha256.Sum256([]byte(abs)))[:16])
	if err := os.MkdirAll(out, 0o755); err != nil {
		tb.Fatal(err)
	}
	wasm := filepath.Join(out, filepath.Base(abs)+".wasm")
	cmd := exec.Command(GoTool(), "build", "-buildmode=c-shared", "-o", wasm, ".")
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("hookstest: building %s: %v\n%s", dir, err, stderr.String())
	}
	built[abs] = wasm
	return wasm
}

// BuildAssemblyScript runs `npm ci` (when node_modules is missing) and
// `npm run build` in dir and returns dir/rel, the built module. It skips
// the test only when node or npm is not installed.
func BuildAssemblyScript(tb testing.TB, dir, rel string) string {
	tb.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			tb.Skipf("hookstest: %s is not installed; the AssemblyScript example needs Node.js and npm", tool)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[abs]; ok {
		return p
	}
	run := func(args ...string) {
		cmd := exec.Command("npm", args...)
		cmd.Dir = abs
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			tb.Fatalf("hookstest: npm %v in %s: %v\n%s", args, dir, err, out.String())
		}
	}
	if !fileExists(filepath.Join(abs, "node_modules", ".bin", "asc")) {
		run("ci", "--no-audit", "--no-fund")
	}
	run("run", "build")
	wasm := filepath.Join(abs, rel)
	built[abs] = wasm
	return wasm
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
