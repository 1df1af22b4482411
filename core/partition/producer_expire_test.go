package partition

import (
	"sync"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log"
)

// movingClock is a clock the test advances by hand.
type movingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *movingClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Producers idle for producer.id.expiration.ms are forgotten unless their
// transaction is open; the last batch or marker counts, and a snapshot
// keeps the time across a restart.
func TestExpireProducers(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name    string
		write   func(t *testing.T, p *Partition) // at the start time
		advance time.Duration
		want    int // producers forgotten
	}{
		{"idempotent, idle a day", func(t *testing.T, p *Partition) {
			mustAppend(t, p, batch(t, 1, producer(7, 0, 0)))
		}, day, 1},
		{"idempotent, not yet", func(t *testing.T, p *Partition) {
			mustAppend(t, p, batch(t, 1, producer(7, 0, 0)))
		}, day - time.Millisecond, 0},
		{"open transaction kept", func(t *testing.T, p *Partition) {
			mustAppend(t, p, batch(t, 1, producer(7, 0, 0), transactional()))
		}, 30 * day, 0},
		{"committed transaction, idle", func(t *testing.T, p *Partition) {
			mustAppend(t, p, batch(t, 1, producer(7, 0, 0), transactional()))
			mustMarker(t, p, TxnMarker{ProducerID: 7, ProducerEpoch: 0, Commit: true, CoordinatorEpoch: 1})
		}, day, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, restart := range []bool{false, true} {
				dir := t.TempDir()
				clk := &movingClock{now: testNow}
				p, d := openClocked(t, dir, clk)
				tc.write(t, p)
				if restart {
					if err := p.Snapshot(); err != nil {
						t.Fatal(err)
					}
					p.Close()
					d.Close()
					p, d = openClocked(t, dir, clk)
				}
				clk.Advance(tc.advance)
				if got := p.ExpireProducers(day); got != tc.want {
					t.Fatalf("restart %v: forgot %d producers, want %d", restart, got, tc.want)
				}
				if left := len(p.Producers()); left != 1-tc.want {
					t.Fatalf("restart %v: %d producers left", restart, left)
				}
				p.Close()
				d.Close()
			}
		})
	}
}

func openClocked(t *testing.T, dir string, clk *movingClock) (*Partition, *log.Dir) {
	t.Helper()
	cfg := testConfig()
	d, err := log.OpenDir(dir, log.Options{Now: clk.Now, Logger: quiet}, func(string, int32) log.Config { return cfg.Log })
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Create("t", 0, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(l, [16]byte{1}, cfg, Options{Now: clk.Now, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	p.SetLeadership(1, 3, []int32{1}, []int32{1})
	return p, d
}
