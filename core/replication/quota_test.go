package replication

import (
	"math"
	"testing"
	"time"
)

// TestByteRate follows Kafka's SimpleRate over 11 one-second samples:
// the sum of the live samples over the time since the oldest began, never
// over less than one window.
func TestByteRate(t *testing.T) {
	type rec struct {
		at    time.Duration // since t0
		bytes int64
	}
	tests := []struct {
		name string
		recs []rec
		at   time.Duration
		want float64
	}{
		{"nothing recorded", nil, 5 * time.Second, 0},
		{"a first burst counts over one window", []rec{{0, 1000}}, 0, 1000},
		{"half a window later still one window", []rec{{0, 1000}}, 500 * time.Millisecond, 1000},
		{"spread over the elapsed time", []rec{{0, 1000}}, 4 * time.Second, 250},
		{"several samples", []rec{{0, 1000}, {1 * time.Second, 1000}, {2500 * time.Millisecond, 1000}}, 3 * time.Second, 1000},
		{"same window adds up", []rec{{0, 300}, {200 * time.Millisecond, 300}, {900 * time.Millisecond, 400}}, time.Second, 1000},
		// 11 s after the first sample began it is reset: only the second
		// sample (started at 10 s) counts, over one window.
		{"a sample ages out after samples*window", []rec{{0, 5000}, {10 * time.Second, 100}}, 11 * time.Second, 100},
		{"all aged out", []rec{{0, 5000}}, 30 * time.Second, 0},
		// More samples than the ring holds: the oldest slots are reused.
		{"ring wraps", []rec{{0, 1}, {1 * time.Second, 1}, {2 * time.Second, 1}, {3 * time.Second, 1}, {4 * time.Second, 1},
			{5 * time.Second, 1}, {6 * time.Second, 1}, {7 * time.Second, 1}, {8 * time.Second, 1}, {9 * time.Second, 1},
			{10 * time.Second, 1}, {11 * time.Second, 1100}}, 11500 * time.Millisecond, 1110.0 / 10.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newByteRate(DefaultQuotaConfig())
			for _, rc := range tt.recs {
				r.record(t0.Add(rc.at), rc.bytes)
			}
			if got := r.perSecond(t0.Add(tt.at)); math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("rate %v, want %v", got, tt.want)
			}
		})
	}
}

func TestQuotaShouldThrottle(t *testing.T) {
	c := &clock{t: t0}
	q, err := NewQuota(DefaultQuotaConfig(), c.Now)
	if err != nil {
		t.Fatal(err)
	}
	q.SetThrottled(map[string]ThrottledPartitions{
		"moving": {Partitions: []int32{0, 2}},
		"all":    {All: true},
		"none":   {},
	})
	type check struct {
		topic     string
		partition int32
		inSync    bool
		want      bool
	}
	steps := []struct {
		name    string
		limit   int64
		record  int
		advance time.Duration
		checks  []check
	}{
		{"unthrottled never holds back", Unthrottled, 1000, 0, []check{{"moving", 0, false, false}, {"all", 7, false, false}}},
		// 1000 bytes in the first window read as 1000 B/s.
		{"at the limit is not over it", 1000, 0, 0, []check{{"moving", 0, false, false}}},
		{"over the limit", 999, 0, 0, []check{
			{"moving", 0, false, true}, {"moving", 2, false, true}, {"all", 5, false, true},
			{"moving", 1, false, false}, // not a throttled replica
			{"none", 0, false, false},
			{"other", 0, false, false},
			{"moving", 0, true, false}, // in sync: never held back
		}},
		{"the rate falls as time passes", 999, 0, 3 * time.Second, []check{{"moving", 0, false, false}}},
		// 4000 bytes over the 3 s since the oldest sample began.
		{"more bytes", 999, 3000, 0, []check{{"moving", 0, false, true}}},
		{"every sample ages out", 999, 0, 11 * time.Second, []check{{"moving", 0, false, false}}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			q.SetLimit(st.limit)
			q.Record(st.record)
			c.Advance(st.advance)
			for _, ck := range st.checks {
				if got := q.ShouldThrottle(ck.topic, ck.partition, ck.inSync); got != ck.want {
					t.Errorf("ShouldThrottle(%s-%d, in sync %v) = %v, want %v (stats %+v)", ck.topic, ck.partition, ck.inSync, got, ck.want, q.Stats())
				}
			}
		})
	}
	if s := q.Stats(); s.Recorded != 4000 {
		t.Errorf("recorded %d bytes, want 4000", s.Recorded)
	}
	q.SetLimit(-5)
	if q.Limit() != Unthrottled {
		t.Errorf("a negative limit gives %d, want unthrottled", q.Limit())
	}
	q.SetThrottled(nil)
	if q.IsThrottled("all", 0) {
		t.Error("throttled replicas survive SetThrottled(nil)")
	}
}

func TestQuotaConfigValidate(t *testing.T) {
	for _, cfg := range []QuotaConfig{{0, time.Second}, {11, 0}, {-1, -time.Second}} {
		if _, err := NewQuota(cfg, nil); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	if _, err := NewThrottle(DefaultQuotaConfig(), nil); err != nil {
		t.Fatal(err)
	}
}
