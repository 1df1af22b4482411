package tests

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestHostileClients attacks a SASL listener before authentication — huge
// announced frames, frames announced large and stalled, requests other than
// the SASL ones, a flood of connections, wrong passwords — while a
// legitimate client keeps producing and consuming. The broker's heap must
// stay bounded and the legitimate client must keep working.
func TestHostileClients(t *testing.T) {
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Limits.MaxConnectionsPerIP = 150
		c.Security.FailedAuthDelayMs = 50
	})
	createSCRAMUsers(t, b.Addr, map[string]string{"good": "good-pw"})
	createTopic(t, b.Addr, "hostile-topic", 1, nil)
	base := heapInUse()

	// The legitimate client: one connection, opened before the attack.
	good, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms("good", "good-pw")["SCRAM-SHA-256"]),
		kgo.ConsumeTopics("hostile-topic"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := good.ProduceSync(ctx, &kgo.Record{Topic: "hostile-topic", Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// Its produce and fetch connections are open before the attack: the
	// flood below comes from the same address and fills its quota of
	// connections, which a real attacker's address would not share.
	if fs := good.PollFetches(ctx); fs.Err0() != nil || fs.NumRecords() != 1 {
		t.Fatalf("consume before the attack: %v, %d records", fs.Err0(), fs.NumRecords())
	}

	var (
		mu       sync.Mutex
		held     []net.Conn
		closedBy atomic.Int64 // connections the broker closed on us
	)
	hold := func(c net.Conn) {
		mu.Lock()
		held = append(held, c)
		mu.Unlock()
	}
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	// expectClosed waits for the broker to close c.
	expectClosed := func(c net.Conn) {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 256)
		for {
			if _, err := c.Read(buf); err != nil {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					closedBy.Add(1)
				}
				return
			}
		}
	}
	frameHeader := func(size uint32, key int16) []byte {
		h := binary.BigEndian.AppendUint32(nil, size)
		h = binary.BigEndian.AppendUint16(h, uint16(key))
		h = binary.BigEndian.AppendUint16(h, 0)
		return binary.BigEndian.AppendUint32(h, 1) // correlation id
	}

	var wg sync.WaitGroup
	attack := func(n int, fn func(c net.Conn)) {
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := net.DialTimeout("tcp", secure, 10*time.Second)
				if err != nil {
					return
				}
				fn(c)
			}()
		}
	}
	// 1. Frames announced at 1 GiB: refused from the size alone.
	attack(40, func(c net.Conn) {
		defer c.Close()
		c.Write(frameHeader(1<<30, 17))
		expectClosed(c)
	})
	// 2. Frames announced at 500 KiB (under the pre-auth cap) that stall
	//    after a few bytes, held open: each may pin only what it sent.
	attack(60, func(c net.Conn) {
		c.Write(frameHeader(500<<10, 36))
		hold(c)
	})
	// 3. Requests other than ApiVersions and SASL before authenticating.
	attack(40, func(c net.Conn) {
		defer c.Close()
		req := kmsg.NewPtrMetadataRequest()
		body := req.AppendTo(nil)
		c.Write(append(frameHeader(uint32(8+len(body)), 3), body...))
		expectClosed(c)
	})
	wg.Wait()

	// 4. Wrong passwords, from real SASL clients.
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms("good", "wrong")["SCRAM-SHA-512"]), kgo.RequestRetries(0))
			if err != nil {
				return
			}
			defer cl.Close()
			pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
			defer pcancel()
			if err := cl.Ping(pctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Errorf("wrong password: %v, want SASL_AUTHENTICATION_FAILED", err)
			}
		}()
	}
	wg.Wait()
	// 5. A connection flood beyond the per-address limit.
	var flooded, refused atomic.Int64
	for i := 0; i < 300; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", secure, 10*time.Second)
			if err != nil {
				refused.Add(1)
				return
			}
			flooded.Add(1)
			hold(c)
		}()
	}
	wg.Wait()

	// While all that is open, the legitimate client still works.
	if err := good.ProduceSync(ctx, &kgo.Record{Topic: "hostile-topic", Value: []byte("during")}).FirstErr(); err != nil {
		t.Fatalf("the legitimate client failed to produce during the attack: %v", err)
	}
	got := 0
	for got < 1 {
		fs := good.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("the legitimate client failed to consume during the attack: %v", err)
		}
		got += fs.NumRecords()
	}
	// Memory: 60 stalled frames of 500 KiB would pin 30 MiB if allocated
	// whole, and 40 frames of 1 GiB would be fatal; the bound below leaves
	// room for the test's own goroutines and clients.
	during := heapInUse()
	if grew := int64(during) - int64(base); grew > 24<<20 {
		t.Fatalf("heap grew by %d MiB under attack", grew>>20)
	}
	if closedBy.Load() < 80 {
		t.Fatalf("the broker closed %d of the 80 oversized or premature requests", closedBy.Load())
	}
	t.Logf("heap %d MiB before, %d MiB under attack; %d flood connections accepted and held, %d refused",
		base>>20, during>>20, flooded.Load(), refused.Load())

	// The flood beyond the per-address limit was cut: the broker closed
	// connections past 150 at once.
	mu.Lock()
	conns := held
	held = nil
	mu.Unlock()
	closedNow := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				closedNow++
			}
		}
		c.Close()
	}
	if closedNow < len(conns)-150 {
		t.Fatalf("%d of %d held connections were closed by the broker; at most 150 may stay open", closedNow, len(conns))
	}
	if err := good.ProduceSync(ctx, &kgo.Record{Topic: "hostile-topic", Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("the legitimate client after the attack: %v", err)
	}
}
