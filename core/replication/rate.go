package replication

import (
	"fmt"
	"time"
)

// QuotaConfig shapes how a replication quota measures its byte rate
// (Kafka's replication.quota.window.num and
// replication.quota.window.size.seconds).
type QuotaConfig struct {
	// Samples is how many windows the rate spans.
	Samples int
	// Window is the length of one sample.
	Window time.Duration
}

// DefaultQuotaConfig is Kafka's: 11 samples of one second.
func DefaultQuotaConfig() QuotaConfig {
	return QuotaConfig{Samples: 11, Window: time.Second}
}

// Validate checks the config.
func (c QuotaConfig) Validate() error {
	if c.Samples < 1 || c.Window <= 0 {
		return fmt.Errorf("replication: quota config %+v: samples and window must be positive", c)
	}
	return nil
}

// sample is the bytes recorded in one window from start on.
type sample struct {
	start time.Time
	bytes int64
}

// byteRate measures bytes per second over the last Samples windows, as
// Kafka's SimpleRate over a sampled total does: a sample is complete once
// Window has passed since its start, the next record then starts a new one
// (reusing the oldest slot); samples older than Samples*Window are reset;
// the rate is the sum of the samples over the time since the oldest one
// started, but never over less than one window, so that a first burst does
// not read as an infinite rate. It is not safe for concurrent use.
type byteRate struct {
	cfg     QuotaConfig
	samples []sample // a ring of at most cfg.Samples
	cur     int      // the sample being filled
}

func newByteRate(cfg QuotaConfig) *byteRate {
	return &byteRate{cfg: cfg, samples: make([]sample, 0, cfg.Samples)}
}

// record adds n bytes at now.
func (r *byteRate) record(now time.Time, n int64) {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now})
		r.cur = 0
	}
	if now.Sub(r.samples[r.cur].start) >= r.cfg.Window {
		r.cur = (r.cur + 1) % r.cfg.Samples
		if r.cur == len(r.samples) {
			r.samples = append(r.samples, sample{start: now})
		} else {
			r.samples[r.cur] = sample{start: now}
		}
	}
	r.samples[r.cur].bytes += n
}

// purge resets the samples that have aged out of the measured span.
func (r *byteRate) purge(now time.Time) {
	span := time.Duration(r.cfg.Samples) * r.cfg.Window
	for i := range r.samples {
		if now.Sub(r.samples[i].start) >= span {
			r.samples[i] = sample{start: now}
		}
	}
}

// perSecond is the measured rate at now.
func (r *byteRate) perSecond(now time.Time) float64 {
	r.purge(now)
	if len(r.samples) == 0 {
		return 0
	}
	var total int64
	oldest := r.samples[0].start
	for _, s := range r.samples {
		total += s.bytes
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	elapsed := max(now.Sub(oldest), r.cfg.Window)
	return float64(total) / elapsed.Seconds()
}
