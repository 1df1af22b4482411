package protocol

import (
	"context"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// emfileListener fails its first n Accepts as a process out of file
// descriptors does, then accepts for real.
type emfileListener struct {
	net.Listener
	n atomic.Int32
}

func (l *emfileListener) Accept() (net.Conn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestServeSurvivesEMFILE: running out of file descriptors is a passing
// state (a connection or a segment closes, and accept works again), so the
// listener backs off and goes on; before, the first EMFILE ended Serve and
// with it the broker.
func TestServeSurvivesEMFILE(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &emfileListener{Listener: inner}
	ln.n.Store(5)
	srv := &Server{Registry: secRegistry(), MaxRequestBytes: 1 << 20}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	returned := false
	defer func() {
		cancel()
		if !returned {
			<-done
		}
	}()
	c, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for srv.open.Load() != 1 {
		select {
		case err := <-done:
			returned = true
			t.Fatalf("Serve returned after EMFILE: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection was never accepted after EMFILE")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
