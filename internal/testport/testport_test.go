package testport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
)

// TestPortReserved: a port Port hands out is outside the kernel's
// ephemeral range (so no outgoing connection can take it) and is reserved
// against other test processes until the test ends; a port another
// process has bound is never handed out.
func TestPortReserved(t *testing.T) {
	if EphemeralStart()-Low < 1000 {
		t.Skip("ephemeral range starts below the test port range")
	}
	seen := map[int]bool{}
	for range 20 {
		p := Port(t)
		if p < Low || p >= EphemeralStart() || (p >= 28000 && p < 30000) {
			t.Fatalf("port %d outside %d-%d", p, Low, EphemeralStart())
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice while reserved", p)
		}
		seen[p] = true
	}
	dir := LockDir()
	for p := range seen {
		// Another test process (a second flock on a separate open file
		// description) cannot reserve it while this test holds it.
		if f := Reserve(dir, p); f != nil {
			_ = f.Close()
			t.Fatalf("port %d reserved twice", p)
		}
	}
	// A port that something listens on is refused even if its lock is free.
	for range 50 {
		p := Low + rand.IntN(min(High, EphemeralStart())-Low)
		if seen[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		f := Reserve(dir, p)
		_ = ln.Close()
		if f != nil {
			_ = f.Close()
			t.Fatalf("port %d reserved while bound", p)
		}
		return
	}
}
