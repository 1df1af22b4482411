package mirror

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the mirror's Prometheus series; every one carries the mirror's
// name as a constant label and, where it concerns a partition, the source
// topic and partition.
type metrics struct {
	records   *prometheus.CounterVec
	bytes     *prometheus.CounterVec
	lag       *prometheus.GaugeVec
	age       *prometheus.GaugeVec
	latency   *prometheus.HistogramVec
	gap       *prometheus.CounterVec
	already   *prometheus.CounterVec
	failures  *prometheus.CounterVec
	failing   *prometheus.GaugeVec
	lastWrite *prometheus.GaugeVec
	tooLarge  *prometheus.CounterVec
	checkpts  prometheus.Counter
	synced    prometheus.Counter
	heartbeat prometheus.Counter
	buffered  prometheus.Gauge
}

func newMetrics(name string, reg prometheus.Registerer) (*metrics, error) {
	cl := prometheus.Labels{"mirror": name}
	part := []string{"topic", "partition"}
	m := &metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gregor_mirror_records_total",
			Help: "Records written to the target.", ConstLabels: cl}, part),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gregor_mirror_bytes_total",
			Help:        "Bytes written to the target (record batches in link mode; keys, values and headers in copy mode).",
			ConstLabels: cl}, part),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gregor_mirror_lag_records",
			Help: "Source high watermark minus the next source offset to mirror.", ConstLabels: cl}, part),
		age: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gregor_mirror_record_age_seconds",
			Help: "Age, when it reached the target, of the last mirrored record (by its timestamp).", ConstLabels: cl}, part),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gregor_mirror_replication_latency_seconds",
			Help:        "Time from a record's timestamp to its acknowledgement by the target.",
			ConstLabels: cl, Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, part),
		gap: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gregor_mirror_source_gap_records_total",
			Help: "Offsets deleted on the source (retention) before they were mirrored.", ConstLabels: cl}, part),
		already: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gregor_mirror_records_already_on_target_total",
			Help:        "Records found on the target when resuming after a restart, which were therefore not written again.",
			ConstLabels: cl}, part),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gregor_mirror_partition_failures_total",
			Help: "Times a partition stopped with an error.", ConstLabels: cl}, part),
		failing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gregor_mirror_partition_failing",
			Help:        "1 while a persistent error (record too large, authorization, missing topic, source gap) stops the partition, else 0.",
			ConstLabels: cl}, part),
		lastWrite: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gregor_mirror_last_write_timestamp_seconds",
			Help: "Unix time of the partition's last record acknowledged by the target.", ConstLabels: cl}, part),
		tooLarge: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gregor_mirror_records_too_large_total",
			Help:        "Source records larger than the target topic's max.message.bytes (skipped under on_record_too_large = skip).",
			ConstLabels: cl}, part),
		checkpts: prometheus.NewCounter(prometheus.CounterOpts{Name: "gregor_mirror_checkpoints_total",
			Help: "Checkpoint records written.", ConstLabels: cl}),
		synced: prometheus.NewCounter(prometheus.CounterOpts{Name: "gregor_mirror_group_offsets_synced_total",
			Help: "Translated offsets committed into target groups.", ConstLabels: cl}),
		heartbeat: prometheus.NewCounter(prometheus.CounterOpts{Name: "gregor_mirror_heartbeats_total",
			Help: "Heartbeats written.", ConstLabels: cl}),
		buffered: prometheus.NewGauge(prometheus.GaugeOpts{Name: "gregor_mirror_buffered_bytes",
			Help:        "Link mode: bytes of source fetches in flight (at their maximum size) and of fetched batches not yet acknowledged by the target, bounded by mirror.buffer_memory.",
			ConstLabels: cl}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.records, m.bytes, m.lag, m.age, m.latency, m.gap, m.already,
			m.failures, m.failing, m.lastWrite, m.tooLarge, m.checkpts, m.synced, m.heartbeat, m.buffered} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("mirror: %s: metrics: %w", name, err)
			}
		}
	}
	return m, nil
}

// partitionMetrics are one partition's series, resolved once.
type partitionMetrics struct {
	records, bytes, gap, already, failures, tooLarge prometheus.Counter
	lag, age, failing, lastWrite                     prometheus.Gauge
	latency                                          prometheus.Observer
}

func (m *metrics) partition(topic string, p int32) partitionMetrics {
	l := prometheus.Labels{"topic": topic, "partition": strconv.Itoa(int(p))}
	return partitionMetrics{
		records: m.records.With(l), bytes: m.bytes.With(l), gap: m.gap.With(l), already: m.already.With(l),
		failures: m.failures.With(l), lag: m.lag.With(l), age: m.age.With(l), latency: m.latency.With(l),
		failing: m.failing.With(l), lastWrite: m.lastWrite.With(l), tooLarge: m.tooLarge.With(l),
	}
}
