package auth

import (
	"errors"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func part(name string) *QuotaPart { return &QuotaPart{Name: name} }
func def() *QuotaPart             { return &QuotaPart{Default: true} }

// TestQuotaPrecedence checks Kafka's eight-step order: each entry is
// removed in turn and the next most specific one must apply.
func TestQuotaPrecedence(t *testing.T) {
	p := QuotaProducerByteRate
	all := []QuotaEntry{
		{User: part("alice"), ClientID: part("app"), Values: map[string]float64{p: 1}},
		{User: part("alice"), ClientID: def(), Values: map[string]float64{p: 2}},
		{User: part("alice"), Values: map[string]float64{p: 3}},
		{User: def(), ClientID: part("app"), Values: map[string]float64{p: 4}},
		{User: def(), ClientID: def(), Values: map[string]float64{p: 5}},
		{User: def(), Values: map[string]float64{p: 6}},
		{ClientID: part("app"), Values: map[string]float64{p: 7}},
		{ClientID: def(), Values: map[string]float64{p: 8}},
	}
	q := NewQuotas(DefaultQuotaConfig())
	for i := range all {
		q.Set(all[i:])
		if got, ok := q.Limit(p, "alice", "app"); !ok || got != float64(i+1) {
			t.Fatalf("with entries %d..: limit %v %v, want %d", i, got, ok, i+1)
		}
	}
	q.Set(nil)
	if _, ok := q.Limit(p, "alice", "app"); ok {
		t.Fatal("a limit with no quotas")
	}
	// Another key does not fall back to a less specific entity's value.
	q.Set([]QuotaEntry{
		{User: part("alice"), Values: map[string]float64{QuotaConsumerByteRate: 10}},
		{ClientID: def(), Values: map[string]float64{p: 20}},
	})
	if got, _ := q.Limit(QuotaConsumerByteRate, "alice", "x"); got != 10 {
		t.Fatalf("consumer limit %v", got)
	}
	if got, _ := q.Limit(p, "alice", "x"); got != 20 {
		t.Fatalf("producer limit %v, want the client default's 20", got)
	}
	if _, ok := q.Limit(p, "bob", "x"); !ok {
		t.Fatal("the client-id default applies to everyone")
	}
}

func TestQuotaThrottle(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	cfg := DefaultQuotaConfig()
	cfg.Now = clk.now
	q := NewQuotas(cfg)
	q.Set([]QuotaEntry{{User: def(), Values: map[string]float64{QuotaProducerByteRate: 1000}}})

	// 10 s of measured window at 1000 B/s is 10000 B before any throttle.
	if d := q.Record(QuotaProducerByteRate, "alice", "c1", 9000); d != 0 {
		t.Fatalf("throttled %v within the quota", d)
	}
	d := q.Record(QuotaProducerByteRate, "alice", "c2", 11000)
	// Rate 20000 B over 10 s = 2000 B/s, twice the quota: (2000-1000)/1000 × 10 s.
	if d != 10*time.Second {
		t.Fatalf("throttle %v, want 10s", d)
	}
	// Another user has its own rate under the default user quota.
	if d := q.Record(QuotaProducerByteRate, "bob", "c1", 5000); d != 0 {
		t.Fatalf("bob throttled %v", d)
	}
	// A huge burst is bounded by the whole window.
	if d := q.Record(QuotaProducerByteRate, "alice", "c1", 1e9); d != 11*time.Second {
		t.Fatalf("throttle %v, want the 11s bound", d)
	}
	// Once the window has passed, the rate is forgotten.
	clk.advance(12 * time.Second)
	if d := q.Record(QuotaProducerByteRate, "alice", "c1", 100); d != 0 {
		t.Fatalf("throttled %v after the window passed", d)
	}
	// No quota, no throttle.
	if d := q.Record(QuotaConsumerByteRate, "alice", "c1", 1e12); d != 0 {
		t.Fatalf("throttled %v without a quota", d)
	}
}

func TestQuotaBucketsBounded(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	cfg := DefaultQuotaConfig()
	cfg.Now, cfg.MaxBuckets = clk.now, 50
	q := NewQuotas(cfg)
	q.Set([]QuotaEntry{{ClientID: def(), Values: map[string]float64{QuotaRequestPercentage: 50}}})
	for i := 0; i < 1000; i++ {
		q.Record(QuotaRequestPercentage, "", string(rune('a'+i%26))+time.Duration(i).String(), 1)
		clk.advance(time.Millisecond)
	}
	if n := q.Buckets(); n > 50 {
		t.Fatalf("%d buckets kept, bound 50", n)
	}
}

func TestValidateQuota(t *testing.T) {
	for _, tc := range []struct {
		types []string
		key   string
		v     float64
		ok    bool
	}{
		{[]string{"user"}, QuotaProducerByteRate, 1024, true},
		{[]string{"client-id", "user"}, QuotaRequestPercentage, 12.5, true},
		{[]string{"user"}, QuotaProducerByteRate, 0, false},
		{[]string{"user"}, QuotaProducerByteRate, -1, false},
		{[]string{"user"}, "bogus_rate", 1, false},
		{[]string{"ip"}, QuotaConnectionCreationRate, 10, true},
		{[]string{"ip"}, QuotaConnectionCreationRate, 1.5, false},
		{[]string{"ip"}, QuotaProducerByteRate, 10, false},
		{[]string{"user"}, QuotaConnectionCreationRate, 10, false},
	} {
		err := ValidateQuota(tc.types, tc.key, tc.v)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidQuota)) {
			t.Errorf("%v %s=%v: %v", tc.types, tc.key, tc.v, err)
		}
	}
}

func TestQuotaConnectionRate(t *testing.T) {
	q := NewQuotas(DefaultQuotaConfig())
	q.Set([]QuotaEntry{
		{IP: def(), Values: map[string]float64{QuotaConnectionCreationRate: 5}},
		{IP: part("10.0.0.1"), Values: map[string]float64{QuotaConnectionCreationRate: 50}},
	})
	if r, ok := q.ConnectionRate("10.0.0.1"); !ok || r != 50 {
		t.Fatalf("own rate %v %v", r, ok)
	}
	if r, ok := q.ConnectionRate("10.0.0.2"); !ok || r != 5 {
		t.Fatalf("default rate %v %v", r, ok)
	}
}
