package extension

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gregorbroker/gregor/sdk/retention"
)

// latencyBuckets are the upper bounds (seconds) of the call latency
// histogram: 10 µs to about 2.6 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.00001, 4, 10)

// Stats count one extension's calls. It is safe for concurrent use.
type Stats struct {
	Name, Kind string

	calls, errors, fallbacks atomic.Uint64
	nanos, maxNanos          atomic.Int64
	buckets                  [11]atomic.Uint64 // one per latencyBuckets bound, then +Inf
}

// StatsSnapshot is Stats at one moment.
type StatsSnapshot struct {
	Name, Kind               string
	Calls, Errors, Fallbacks uint64
	Total, Max               time.Duration
}

// Observe records one call that took d and failed when err is non-nil.
func (s *Stats) Observe(d time.Duration, err error) {
	s.calls.Add(1)
	if err != nil {
		s.errors.Add(1)
	}
	s.nanos.Add(int64(d))
	for {
		m := s.maxNanos.Load()
		if int64(d) <= m || s.maxNanos.CompareAndSwap(m, int64(d)) {
			break
		}
	}
	sec := d.Seconds()
	i := sort.SearchFloat64s(latencyBuckets, sec)
	s.buckets[i].Add(1)
}

// Fallback records a failed call answered by the fallback.
func (s *Stats) Fallback() { s.fallbacks.Add(1) }

// Snapshot reads the counters.
func (s *Stats) Snapshot() StatsSnapshot {
	return StatsSnapshot{Name: s.Name, Kind: s.Kind, Calls: s.calls.Load(), Errors: s.errors.Load(),
		Fallbacks: s.fallbacks.Load(), Total: time.Duration(s.nanos.Load()), Max: time.Duration(s.maxNanos.Load())}
}

// countedPolicy times a retention policy's calls.
type countedPolicy struct {
	impl  retention.Policy
	stats *Stats
}

func (c *countedPolicy) DeletableSegments(ctx context.Context, p retention.Partition) (int, error) {
	start := time.Now()
	n, err := c.impl.DeletableSegments(ctx, p)
	c.stats.Observe(time.Since(start), err)
	return n, err
}

// countedInterestPolicy is a countedPolicy whose policy names the groups it
// needs; ApplyPolicy must still see that.
type countedInterestPolicy struct {
	countedPolicy
	gi retention.GroupInterest
}

func (c *countedInterestPolicy) Groups() []string { return c.gi.Groups() }

func countPolicy(p retention.Policy, s *Stats) retention.Policy {
	if gi, ok := p.(retention.GroupInterest); ok {
		return &countedInterestPolicy{countedPolicy{p, s}, gi}
	}
	return &countedPolicy{p, s}
}

// Stats lists the counters of every declared partitioner and retention
// policy, by name.
func (s *Set) Stats() []StatsSnapshot {
	out := make([]StatsSnapshot, 0, len(s.stats))
	for _, st := range s.stats {
		out = append(out, st.Snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

var (
	descCalls = prometheus.NewDesc("gregor_extension_calls_total",
		"Calls into an extension.", []string{"extension", "kind"}, nil)
	descErrors = prometheus.NewDesc("gregor_extension_errors_total",
		"Extension calls that failed (trap, timeout, crash or bad answer).", []string{"extension", "kind"}, nil)
	descFallbacks = prometheus.NewDesc("gregor_extension_fallbacks_total",
		"Failed extension calls answered by the built-in fallback.", []string{"extension", "kind"}, nil)
	descLatency = prometheus.NewDesc("gregor_extension_call_duration_seconds",
		"Duration of extension calls.", []string{"extension", "kind"}, nil)
)

// Describe implements prometheus.Collector.
func (s *Set) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCalls
	ch <- descErrors
	ch <- descFallbacks
	ch <- descLatency
}

// Collect implements prometheus.Collector.
func (s *Set) Collect(ch chan<- prometheus.Metric) {
	for _, st := range s.stats {
		snap := st.Snapshot()
		ch <- prometheus.MustNewConstMetric(descCalls, prometheus.CounterValue, float64(snap.Calls), snap.Name, snap.Kind)
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(snap.Errors), snap.Name, snap.Kind)
		ch <- prometheus.MustNewConstMetric(descFallbacks, prometheus.CounterValue, float64(snap.Fallbacks), snap.Name, snap.Kind)
		buckets := make(map[float64]uint64, len(latencyBuckets))
		var cum uint64
		for i, ub := range latencyBuckets {
			cum += st.buckets[i].Load()
			buckets[ub] = cum
		}
		count := cum + st.buckets[len(latencyBuckets)].Load()
		ch <- prometheus.MustNewConstHistogram(descLatency, count, snap.Total.Seconds(), buckets, snap.Name, snap.Kind)
	}
}
