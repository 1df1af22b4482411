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
	"syscall"
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
	unlock := lockDir(tb, abs)
	defer unlock()
	wasm := filepath.Join(out, filepath.Base(abs)+".wasm")
	tmp := fmt.Sprintf("%s.tmp-%d", wasm, os.Getpid())
	cmd := exec.Command(GoTool(), "build", "-buildmode=c-shared", "-o", tmp, ".")
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("hookstest: building %s: %v\n%s", dir, err, stderr.String())
	}
	// Readers in other test processes see the old file or the new one, never half of one.
	if err := os.Rename(tmp, wasm); err != nil {
		tb.Fatal(err)
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
	// Test packages run in parallel processes; one npm at a time per example.
	unlock := lockDir(tb, abs)
	defer unlock()
	if !fileExists(filepath.Join(abs, "node_modules", ".bin", "asc")) {
		run("ci", "--no-audit", "--no-fund")
	}
	wasm := filepath.Join(abs, rel)
	tmp := filepath.Join(filepath.Dir(wasm), fmt.Sprintf(".tmp-%d.wasm", os.Getpid()))
	run("run", "build", "--", "--outFile", tmp)
	if err := os.Rename(tmp, wasm); err != nil {
		tb.Fatal(err)
	}
	built[abs] = wasm
	return wasm
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// lockDir takes an exclusive lock shared by every test process building
// from dir, and returns its release.
func lockDir(tb testing.TB, dir string) func() {
	tb.Helper()
	locks := filepath.Join(os.TempDir(), "gregor-hookstest")
	if err := os.MkdirAll(locks, 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(locks, fmt.Sprintf("%x", sha256.Sum256([]byte(dir)))[:16]+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		tb.Fatal(err)
	}
	return func() { f.Close() } // closing releases the lock
}
