package api

import (
	"context"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// MetricsCollector exports what the broker knows across its parts: the
// cluster's partition health and controller state from the metadata image,
// and each group's lag per partition from the group coordinator and the
// hosted partitions.
type MetricsCollector struct{ b *Broker }

// MetricsCollector returns the broker's Prometheus collector.
func (b *Broker) MetricsCollector() *MetricsCollector { return &MetricsCollector{b} }

var (
	descOffline = prometheus.NewDesc("gregor_cluster_offline_partitions",
		"Partitions without a live leader, cluster-wide.", nil, nil)
	descURPCluster = prometheus.NewDesc("gregor_cluster_under_replicated_partitions",
		"Partitions whose ISR is smaller than their replica set, cluster-wide.", nil, nil)
	descUnderMinISR = prometheus.NewDesc("gregor_cluster_under_min_isr_partitions",
		"Partitions whose ISR is smaller than min.insync.replicas, cluster-wide.", nil, nil)
	descPartitions = prometheus.NewDesc("gregor_cluster_partitions",
		"Partitions, cluster-wide.", nil, nil)
	descBrokers = prometheus.NewDesc("gregor_cluster_brokers",
		"Registered brokers.", nil, nil)
	descControllerActive = prometheus.NewDesc("gregor_controller_active",
		"1 when this broker is the active controller.", nil, nil)
	descMetadataOffset = prometheus.NewDesc("gregor_controller_metadata_offset",
		"Raft index of the metadata image this broker serves.", nil, nil)
	descGroupLag = prometheus.NewDesc("gregor_group_lag",
		"A group's lag on a partition: high watermark minus committed offset.", []string{"group", "topic", "partition"}, nil)
	descGroupLagSum = prometheus.NewDesc("gregor_group_lag_sum",
		"A group's total lag.", []string{"group"}, nil)
	descGroupMembers = prometheus.NewDesc("gregor_group_members",
		"Members of a group.", []string{"group", "state"}, nil)
	descShareInFlight = prometheus.NewDesc("gregor_share_inflight_records",
		"Records between the start and end offsets of the share-partitions this broker serves.", nil, nil)
	descShareAcquired = prometheus.NewDesc("gregor_share_acquired_records",
		"Records under an acquisition lock in the share-partitions this broker serves.", nil, nil)
	descShareLockTimeouts = prometheus.NewDesc("gregor_share_acquisition_lock_timeouts_total",
		"Acquisition locks that expired before the record was acknowledged.", nil, nil)
	descShareArchived = prometheus.NewDesc("gregor_share_archived_records_total",
		"Records archived: rejected, over the delivery count limit, aborted or control records.", nil, nil)
	descFetchSessions = prometheus.NewDesc("gregor_fetch_sessions",
		"Incremental fetch sessions cached (Kafka's NumIncrementalFetchSessions).", nil, nil)
	descFetchSessionPartitions = prometheus.NewDesc("gregor_fetch_session_partitions",
		"Partitions cached over all fetch sessions (Kafka's NumIncrementalFetchPartitionsCached).", nil, nil)
	descFetchSessionEvictions = prometheus.NewDesc("gregor_fetch_session_evictions_total",
		"Fetch sessions evicted to make room for a new one.", nil, nil)
	descFetchSessionIncremental = prometheus.NewDesc("gregor_fetch_session_incremental_requests_total",
		"Incremental fetch requests served from a session.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *MetricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOffline, descURPCluster, descUnderMinISR, descPartitions, descBrokers,
		descControllerActive, descMetadataOffset, descGroupLag, descGroupLagSum, descGroupMembers,
		descShareInFlight, descShareAcquired, descShareLockTimeouts, descShareArchived,
		descFetchSessions, descFetchSessionPartitions, descFetchSessionEvictions, descFetchSessionIncremental} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *MetricsCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.b
	im := b.Controller.Image()
	var parts, offlineN, urp, underMin int
	for _, t := range im.Topics {
		minISR := b.partitionConfig(im, t.Name).MinInsyncReplicas
		for _, p := range t.Partitions {
			parts++
			if offline(im, p) {
				offlineN++
			}
			if len(p.ISR) < len(p.Replicas) {
				urp++
			}
			if int32(len(p.ISR)) < minISR {
				underMin++
			}
		}
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descPartitions, float64(parts))
	gauge(descOffline, float64(offlineN))
	gauge(descURPCluster, float64(urp))
	gauge(descUnderMinISR, float64(underMin))
	gauge(descBrokers, float64(len(im.Brokers)))
	active := 0.0
	if im.ControllerID == b.Config.NodeID {
		active = 1
	}
	gauge(descControllerActive, active)
	gauge(descMetadataOffset, float64(im.Offset))
	st := b.share().Partitions().Totals()
	gauge(descShareInFlight, float64(st.InFlight))
	gauge(descShareAcquired, float64(st.Acquired))
	ch <- prometheus.MustNewConstMetric(descShareLockTimeouts, prometheus.CounterValue, float64(st.LockTimeouts))
	ch <- prometheus.MustNewConstMetric(descShareArchived, prometheus.CounterValue, float64(st.Archived))
	fs := b.fetchSessions().Stats()
	gauge(descFetchSessions, float64(fs.Sessions))
	gauge(descFetchSessionPartitions, float64(fs.Partitions))
	ch <- prometheus.MustNewConstMetric(descFetchSessionEvictions, prometheus.CounterValue, float64(fs.Evictions))
	ch <- prometheus.MustNewConstMetric(descFetchSessionIncremental, prometheus.CounterValue, float64(fs.Incremental))
	if b.Groups == nil {
		return
	}
	// The broker's own view: no principal, nothing filtered.
	view := adminView{b}
	groups, _ := view.Groups(context.Background())
	for _, g := range groups {
		gauge(descGroupMembers, float64(g.Members), g.Group, g.State)
		lags, err := b.groupLag(context.Background(), g.Group, nil)
		if err != nil {
			continue
		}
		var sum int64
		for _, l := range lags {
			if l.Lag < 0 {
				continue
			}
			sum += l.Lag
			gauge(descGroupLag, float64(l.Lag), g.Group, l.Topic, strconv.Itoa(int(l.Partition)))
		}
		gauge(descGroupLagSum, float64(sum), g.Group)
	}
}
