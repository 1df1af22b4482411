// Package testport hands out loopback ports to tests that start brokers
// whose listen address must be known before they bind (controller voters,
// child processes).
package testport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Ports for brokers started by tests. A port found by listening on :0 and
// closing is in the kernel's ephemeral range, so any process's outgoing
// connection (or another test's :0 listener) can take it before the child
// binds it. Port instead hands out ports below the ephemeral range,
// where the kernel never assigns one on its own, and outside the fixed
// ranges of the interop scripts (28000-29999). Among test processes it
// reserves the port with an flock on a per-port file, held until the test
// ends, so two test runs on one machine cannot hand out the same port.
const (
	Low  = 20000
	High = 28000 // exclusive
)

var (
	ephemeralOnce sync.Once
	ephemeralLow  int
)

// EphemeralStart is the first port of the kernel's ephemeral range
// (32768 if it cannot be read).
func EphemeralStart() int {
	ephemeralOnce.Do(func() {
		ephemeralLow = 32768
		b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
		if err != nil {
			return
		}
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				ephemeralLow = n
			}
		}
	})
	return ephemeralLow
}

// Port returns a loopback port that is free now and reserved against
// other test processes until t ends.
func Port(t testing.TB) int {
	t.Helper()
	high := min(High, EphemeralStart())
	if high-Low < 1000 {
		return ephemeralPort(t) // an unusual ephemeral range: the old way
	}
	dir := LockDir()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatalf("port lock dir: %v", err)
	}
	for range 200 {
		port := Low + rand.IntN(high-Low)
		if f := Reserve(dir, port); f != nil {
			t.Cleanup(func() { _ = f.Close() })
			return port
		}
	}
	t.Fatalf("no free port in %d-%d after 200 tries", Low, high)
	return 0
}

// Reserve takes the port's lock file and checks that nothing listens
// on the port; it returns the open lock file, or nil.
func Reserve(dir string, port int) *os.File {
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.lock", port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		_ = f.Close()
		return nil
	}
	_ = ln.Close()
	return f
}

// ephemeralPort returns a loopback port that was free a moment ago.
func ephemeralPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// LockDir is the folder of the per-port lock files shared by all test
// processes of the machine.
func LockDir() string { return filepath.Join(os.TempDir(), "gregor-test-ports") }

// Addr is Port as a "127.0.0.1:port" address.
func Addr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", Port(t))
}
