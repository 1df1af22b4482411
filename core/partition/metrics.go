package partition

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exports the offsets and sizes of every hosted partition.
type Collector struct{ set *Set }

// NewCollector returns a Prometheus collector over s.
func NewCollector(s *Set) *Collector { return &Collector{set: s} }

var (
	descLEO = prometheus.NewDesc("gregor_partition_log_end_offset",
		"Log end offset of a hosted partition.", []string{"topic", "partition"}, nil)
	descLSO = prometheus.NewDesc("gregor_partition_log_start_offset",
		"Log start offset of a hosted partition.", []string{"topic", "partition"}, nil)
	descHW = prometheus.NewDesc("gregor_partition_high_watermark",
		"High watermark of a hosted partition.", []string{"topic", "partition"}, nil)
	descSize = prometheus.NewDesc("gregor_partition_size_bytes",
		"Bytes on disk of a hosted partition's segments.", []string{"topic", "partition"}, nil)
	descSegs = prometheus.NewDesc("gregor_partition_segments",
		"Segments of a hosted partition.", []string{"topic", "partition"}, nil)
)

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLEO
	ch <- descLSO
	ch <- descHW
	ch <- descSize
	ch <- descSegs
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.set.All() {
		idx := strconv.Itoa(int(p.Index))
		off := p.Offsets()
		ch <- prometheus.MustNewConstMetric(descLEO, prometheus.GaugeValue, float64(off.LogEndOffset), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descLSO, prometheus.GaugeValue, float64(off.LogStartOffset), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descHW, prometheus.GaugeValue, float64(off.HighWatermark), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descSize, prometheus.GaugeValue, float64(p.log.Size()), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descSegs, prometheus.GaugeValue, float64(len(p.log.Segments())), p.Topic, idx)
	}
}
