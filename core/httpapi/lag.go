package httpapi

import (
	"context"
	"sync"
	"time"
)

// LagHistory keeps each group's recent total lag, sampled by the broker
// (SampleLag), so the console can chart it over time. It is safe for
// concurrent use.
type LagHistory struct {
	keep int

	mu      sync.Mutex // guards samples
	samples map[string][]LagSample
}

// NewLagHistory keeps up to keep samples per group (360 if keep <= 0).
func NewLagHistory(keep int) *LagHistory {
	if keep <= 0 {
		keep = 360
	}
	return &LagHistory{keep: keep, samples: map[string][]LagSample{}}
}

// Record adds one sample per listed group at now; groups no longer
// listed are forgotten.
func (h *LagHistory) Record(now time.Time, groups []GroupSummary) {
	ms := now.UnixMilli()
	h.mu.Lock()
	defer h.mu.Unlock()
	seen := make(map[string]bool, len(groups))
	for _, g := range groups {
		seen[g.Group] = true
		s := append(h.samples[g.Group], LagSample{Time: ms, Lag: g.Lag})
		if len(s) > h.keep {
			s = append(s[:0:0], s[len(s)-h.keep:]...)
		}
		h.samples[g.Group] = s
	}
	for g := range h.samples {
		if !seen[g] {
			delete(h.samples, g)
		}
	}
}

// Samples returns a copy of a group's samples, oldest first.
func (h *LagHistory) Samples(group string) []LagSample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]LagSample{}, h.samples[group]...)
}

// SampleLag records every group's lag at each moment tick delivers (a
// time.Ticker's channel in the broker, a test's own channel in tests)
// until ctx ends.
func SampleLag(ctx context.Context, a Admin, h *LagHistory, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick:
			groups, err := a.Groups(ctx)
			if err != nil && len(groups) == 0 {
				continue
			}
			h.Record(now, groups)
		}
	}
}
