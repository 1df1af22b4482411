package partition

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exports the offsets and sizes of every hosted partition.
type Collector struct {
	set     *Set
	node    int32
	nodeSet bool
}

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
	descBytesIn = prometheus.NewDesc("gregor_partition_bytes_in_total",
		"Record batch bytes appended to a hosted partition since it was opened.", []string{"topic", "partition"}, nil)
	descRecordsIn = prometheus.NewDesc("gregor_partition_records_in_total",
		"Records appended to a hosted partition since it was opened.", []string{"topic", "partition"}, nil)
	descBytesOut = prometheus.NewDesc("gregor_partition_bytes_out_total",
		"Record batch bytes read from a hosted partition by fetches since it was opened.", []string{"topic", "partition"}, nil)
	descReplicas = prometheus.NewDesc("gregor_partition_replicas",
		"Replicas assigned to a hosted partition.", []string{"topic", "partition"}, nil)
	descISR = prometheus.NewDesc("gregor_partition_isr",
		"In-sync replicas of a hosted partition.", []string{"topic", "partition"}, nil)
	descURP = prometheus.NewDesc("gregor_partition_under_replicated",
		"1 when a hosted partition's ISR is smaller than its replica set.", []string{"topic", "partition"}, nil)
	descLeader = prometheus.NewDesc("gregor_partition_leader",
		"1 when this broker leads the partition.", []string{"topic", "partition"}, nil)
	descShrinks = prometheus.NewDesc("gregor_partition_isr_shrinks_total",
		"Times a replica left a hosted partition's ISR.", []string{"topic", "partition"}, nil)
	descExpands = prometheus.NewDesc("gregor_partition_isr_expands_total",
		"Times a replica joined a hosted partition's ISR.", []string{"topic", "partition"}, nil)
)

// WithNodeID names this broker, for gregor_partition_leader.
func (c *Collector) WithNodeID(id int32) *Collector {
	c.node, c.nodeSet = id, true
	return c
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLEO
	ch <- descLSO
	ch <- descHW
	ch <- descSize
	ch <- descSegs
	for _, d := range []*prometheus.Desc{descBytesIn, descRecordsIn, descBytesOut, descReplicas, descISR, descURP, descShrinks, descExpands} {
		ch <- d
	}
	if c.nodeSet {
		ch <- descLeader
	}
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
		t := p.Traffic()
		ch <- prometheus.MustNewConstMetric(descBytesIn, prometheus.CounterValue, float64(t.BytesIn), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descRecordsIn, prometheus.CounterValue, float64(t.RecordsIn), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descBytesOut, prometheus.CounterValue, float64(t.BytesOut), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descShrinks, prometheus.CounterValue, float64(t.ISRShrinks), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descExpands, prometheus.CounterValue, float64(t.ISRExpands), p.Topic, idx)
		r := p.Replication()
		urp := 0.0
		if len(r.ISR) < len(r.Replicas) {
			urp = 1
		}
		ch <- prometheus.MustNewConstMetric(descReplicas, prometheus.GaugeValue, float64(len(r.Replicas)), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descISR, prometheus.GaugeValue, float64(len(r.ISR)), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(descURP, prometheus.GaugeValue, urp, p.Topic, idx)
		if c.nodeSet {
			leads := 0.0
			if r.Leader == c.node {
				leads = 1
			}
			ch <- prometheus.MustNewConstMetric(descLeader, prometheus.GaugeValue, leads, p.Topic, idx)
		}
	}
}
