package tests

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// requestCounter counts the requests a client writes, by API key.
type requestCounter struct {
	mu sync.Mutex
	n  map[int16]int
}

func (c *requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[int16]int{}
	}
	c.n[key]++
}

func (c *requestCounter) count(key kmsg.Key) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[int16(key)]
}

// [transactions] version decides whether franz-go uses KIP-890 part 2:
// at 2 partitions join transactions implicitly (no AddPartitionsToTxn once
// the client has seen the finalized feature, at the end of its first
// transaction), at 0 every transaction adds its partitions. Both read back exactly the
// committed records.
func TestTxnTransactionVersion(t *testing.T) {
	tests := []struct {
		version int16
		// AddPartitionsToTxn requests over the 6 transactions of two
		// partitions: franz-go adds each partition on its first record.
		maxAdds int
		minAdds int
	}{
		{2, 2, 0},
		{0, 12, 12},
	}
	for _, tc := range tests {
		t.Run(map[int16]string{0: "tv0", 2: "tv2"}[tc.version], func(t *testing.T) {
			b := startBroker(t, txnConfig, func(c *config.Config) { c.Transactions.Version = tc.version })
			const topic = "txn-tv"
			createTopic(t, b.Addr, topic, 2, nil)
			var reqs requestCounter
			want := produceTxns(t, txnClient(t, b.Addr, "tv-producer", kgo.WithHooks(&reqs)), topic, 6)
			if n := reqs.count(kmsg.AddPartitionsToTxn); n < tc.minAdds || n > tc.maxAdds {
				t.Errorf("%d AddPartitionsToTxn requests, want %d..%d", n, tc.minAdds, tc.maxAdds)
			}
			checkCommitted(t, "franz-go", readCommitted(t, b.Addr, topic, len(want)), want)
		})
	}
}
