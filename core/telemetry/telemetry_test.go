package telemetry

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestDecodeMetrics(t *testing.T) {
	b := encodeMetrics(
		testPoint{name: "org.apache.kafka.producer.record.queue.time.max", value: 12.5, attrs: [][2]string{{"node_id", "1"}}},
		testPoint{name: "org.apache.kafka.producer.record.send.total", sum: true, monotonic: true, value: 42, intValue: true},
		testPoint{name: "org.apache.kafka.producer.buffer.available.bytes", sum: true, value: 3},
	)
	pts, err := DecodeMetrics(b, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []Point{
		{Name: "org.apache.kafka.producer.record.queue.time.max", Value: 12.5, Attributes: []Attribute{{"node_id", "1"}}},
		{Name: "org.apache.kafka.producer.record.send.total", Value: 42, Counter: true},
		{Name: "org.apache.kafka.producer.buffer.available.bytes", Value: 3},
	}
	if len(pts) != len(want) {
		t.Fatalf("%d points, want %d: %+v", len(pts), len(want), pts)
	}
	for i := range want {
		g, w := pts[i], want[i]
		if g.Name != w.Name || g.Value != w.Value || g.Counter != w.Counter || len(g.Attributes) != len(w.Attributes) ||
			(len(w.Attributes) > 0 && g.Attributes[0] != w.Attributes[0]) {
			t.Errorf("point %d: %+v, want %+v", i, g, w)
		}
	}
	for _, bad := range [][]byte{{0x0a, 0x05, 0x01}, {0xff}, b[:len(b)-3]} {
		if _, err := DecodeMetrics(bad, 100); !errors.Is(err, ErrInvalidMetrics) {
			t.Errorf("%x: err %v, want ErrInvalidMetrics", bad, err)
		}
	}
	if _, err := DecodeMetrics(b, 2); !errors.Is(err, ErrInvalidMetrics) {
		t.Errorf("3 points past a bound of 2: err %v", err)
	}
}

func FuzzDecodeMetrics(f *testing.F) {
	f.Add(encodeMetrics(testPoint{name: "a.b", value: 1, attrs: [][2]string{{"k", "v"}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		pts, err := DecodeMetrics(b, 1000)
		if err == nil && len(pts) > 1000 {
			t.Fatalf("%d points past the bound", len(pts))
		}
	})
}

func TestSelect(t *testing.T) {
	re := func(s string) *regexp.Regexp { return regexp.MustCompile("^(?:" + s + ")$") }
	subs := []Subscription{
		{Name: "java", Metrics: []string{"org.apache.kafka.producer."}, IntervalMs: 60000, Match: map[string]*regexp.Regexp{"client_software_name": re("apache-kafka-java")}},
		{Name: "apps", Metrics: []string{"org.apache.kafka.consumer."}, IntervalMs: 30000, Match: map[string]*regexp.Regexp{"client_id": re("app-.*")}},
		{Name: "all", Metrics: []string{"*"}, IntervalMs: 1000, Match: map[string]*regexp.Regexp{"client_instance_id": re("debug-me")}},
	}
	cases := []struct {
		name     string
		client   Client
		metrics  []string
		interval int32
	}{
		{"no match", Client{ClientID: "other", SoftwareName: "librdkafka"}, nil, 300000},
		{"one", Client{ClientID: "x", SoftwareName: "apache-kafka-java"}, []string{"org.apache.kafka.producer."}, 60000},
		{"two merged, smallest interval", Client{ClientID: "app-1", SoftwareName: "apache-kafka-java"},
			[]string{"org.apache.kafka.consumer.", "org.apache.kafka.producer."}, 30000},
		{"every metric", Client{InstanceID: "debug-me", ClientID: "app-1"}, []string{""}, 1000},
	}
	ids := map[int32]string{}
	for _, c := range cases {
		p := Select(subs, c.client)
		if strings.Join(p.Metrics, ",") != strings.Join(c.metrics, ",") || p.IntervalMs != c.interval {
			t.Errorf("%s: %+v, want metrics %v every %d ms", c.name, p, c.metrics, c.interval)
		}
		if prev, dup := ids[p.SubscriptionID]; dup {
			t.Errorf("%s: subscription id %d also given to %s", c.name, p.SubscriptionID, prev)
		}
		ids[p.SubscriptionID] = c.name
	}
	// A changed subscription changes the id.
	c := Client{ClientID: "x", SoftwareName: "apache-kafka-java"}
	before := Select(subs, c).SubscriptionID
	subs[0].IntervalMs = 5000
	if Select(subs, c).SubscriptionID == before {
		t.Error("the subscription id did not change with the subscription")
	}
}

func TestStorePushAndLimit(t *testing.T) {
	now := time.UnixMilli(1_796_000_000_000)
	s := NewStore(Config{MaxBytes: 1 << 20, MaxSeries: 3, Now: func() time.Time { return now }})
	plan := Plan{SubscriptionID: 7, Metrics: []string{""}, IntervalMs: 1000}
	payload := encodeMetrics(
		testPoint{name: "org.apache.kafka.producer.record.send.total", sum: true, monotonic: true, value: 5},
		testPoint{name: "org.apache.kafka.producer.node.request.latency.avg", value: 2, attrs: [][2]string{{"node_id", "1"}}},
		testPoint{name: "org.apache.kafka.producer.node.request.latency.avg", value: 3, attrs: [][2]string{{"node_id", "2"}}},
		testPoint{name: "org.apache.kafka.producer.io.ratio", value: 0.5},
	)
	if err := s.Push("inst-a", "User:alice", plan, 8, false, payload); !errors.Is(err, ErrUnknownSubscription) {
		t.Fatalf("a stale subscription id: err %v", err)
	}
	if err := s.Push("inst-a", "User:alice", plan, 7, false, payload); err != nil {
		t.Fatal(err)
	}
	if err := s.Push("inst-a", "User:alice", plan, 7, false, payload); !errors.Is(err, ErrThrottled) {
		t.Fatalf("a push within the interval: err %v", err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(s)
	want := `
# HELP gregor_client_telemetry_dropped_series_total Client telemetry series dropped because the series limit (telemetry_max_series) was reached.
# TYPE gregor_client_telemetry_dropped_series_total counter
gregor_client_telemetry_dropped_series_total 1
# HELP gregor_client_telemetry_series Client telemetry series kept.
# TYPE gregor_client_telemetry_series gauge
gregor_client_telemetry_series 3
# HELP kafka_client_org_apache_kafka_producer_node_request_latency_avg Client metric pushed by KIP-714 telemetry.
# TYPE kafka_client_org_apache_kafka_producer_node_request_latency_avg gauge
kafka_client_org_apache_kafka_producer_node_request_latency_avg{client_instance_id="inst-a",node_id="1",principal="User:alice"} 2
kafka_client_org_apache_kafka_producer_node_request_latency_avg{client_instance_id="inst-a",node_id="2",principal="User:alice"} 3
# HELP kafka_client_org_apache_kafka_producer_record_send_total Client metric pushed by KIP-714 telemetry.
# TYPE kafka_client_org_apache_kafka_producer_record_send_total counter
kafka_client_org_apache_kafka_producer_record_send_total{client_instance_id="inst-a",principal="User:alice"} 5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}

	// A series updates in place; a client silent for three intervals is
	// forgotten.
	now = now.Add(time.Second)
	if err := s.Push("inst-a", "User:alice", plan, 7, false, encodeMetrics(
		testPoint{name: "org.apache.kafka.producer.record.send.total", sum: true, monotonic: true, value: 9})); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(constCollector(s, "kafka_client_org_apache_kafka_producer_record_send_total")); got != 9 {
		t.Fatalf("record.send.total %v after the second push, want 9", got)
	}
	now = now.Add(3*time.Second + time.Millisecond)
	if n, err := testutil.GatherAndCount(reg, "gregor_client_telemetry_series"); err != nil || n != 1 {
		t.Fatalf("gather: %d, %v", n, err)
	}
	if got := testutil.ToFloat64(constCollector(s, "gregor_client_telemetry_series")); got != 0 {
		t.Fatalf("%v series kept after three silent intervals, want 0", got)
	}

	// A terminating push removes the client's series.
	if err := s.Push("inst-b", "User:bob", plan, 7, false, payload); err != nil {
		t.Fatal(err)
	}
	if err := s.Push("inst-b", "User:bob", plan, 7, true, payload); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(constCollector(s, "gregor_client_telemetry_series")); got != 0 {
		t.Fatalf("%v series after a terminating push, want 0", got)
	}
}

// constCollector yields only the metrics of s named name.
func constCollector(s *Store, name string) prometheus.Collector {
	return filtered{s, name}
}

type filtered struct {
	s    *Store
	name string
}

func (f filtered) Describe(chan<- *prometheus.Desc) {}
func (f filtered) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric, 1000)
	f.s.Collect(all)
	close(all)
	for m := range all {
		if strings.Contains(m.Desc().String(), `"`+f.name+`"`) {
			ch <- m
		}
	}
}
