package tests

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
// binds it. freePort instead hands out ports below the ephemeral range,
// where the kernel never assigns one on its own, and outside the fixed
// ranges of the interop scripts (28000-29999). Among test processes it
// reserves the port with an flock on a per-port file, held until the test
// ends, so two test runs on one machine cannot hand out the same port.
const (
	freePortLow  = 20000
	freePortHigh = 28000 // exclusive
)

var (
	ephemeralOnce sync.Once
	ephemeralLow  int
)

// ephemeralStart is the first port of the kernel's ephemeral range
// (32768 if it cannot be read).
func ephemeralStart() int {
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

// freePort returns a loopback port that is free now and reserved against
// other test processes until t ends.
func freePort(t testing.TB) int {
	t.Helper()
	high := min(freePortHigh, ephemeralStart())
	if high-freePortLow < 1000 {
		return ephemeralPort(t) // an unusual ephemeral range: the old way
	}
	dir := filepath.Join(os.TempDir(), "gregor-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatalf("port lock dir: %v", err)
	}
	for range 200 {
		port := freePortLow + rand.IntN(high-freePortLow)
		if f := reservePort(dir, port); f != nil {
			t.Cleanup(func() { _ = f.Close() })
			return port
		}
	}
	t.Fatalf("no free port in %d-%d after 200 tries", freePortLow, high)
	return 0
}

// reservePort takes the port's lock file and checks that nothing listens
// on the port; it returns the open lock file, or nil.
func reservePort(dir string, port int) *os.File {
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

// TestFreePortReserved: a port freePort hands out is outside the kernel's
// ephemeral range (so no outgoing connection can take it) and is reserved
// against other test processes until the test ends; a port another
// process has bound is never handed out.
func TestFreePortReserved(t *testing.T) {
	if ephemeralStart()-freePortLow < 1000 {
		t.Skip("ephemeral range starts below the test port range")
	}
	seen := map[int]bool{}
	for range 20 {
		p := freePort(t)
		if p < freePortLow || p >= ephemeralStart() || (p >= 28000 && p < 30000) {
			t.Fatalf("port %d outside %d-%d", p, freePortLow, ephemeralStart())
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice while reserved", p)
		}
		seen[p] = true
	}
	dir := filepath.Join(os.TempDir(), "gregor-test-ports")
	for p := range seen {
		// Another test process (a second flock on a separate open file
		// description) cannot reserve it while this test holds it.
		if f := reservePort(dir, p); f != nil {
			_ = f.Close()
			t.Fatalf("port %d reserved twice", p)
		}
	}
	// A port that something listens on is refused even if its lock is free.
	for range 50 {
		p := freePortLow + rand.IntN(min(freePortHigh, ephemeralStart())-freePortLow)
		if seen[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		f := reservePort(dir, p)
		_ = ln.Close()
		if f != nil {
			_ = f.Close()
			t.Fatalf("port %d reserved while bound", p)
		}
		return
	}
}
