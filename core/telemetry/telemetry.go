package telemetry

import (
	"errors"
	"fmt"
	"hash/crc32"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Kafka's telemetry.max.bytes and of Gregor's series bound.
const (
	DefaultMaxBytes   = 1 << 20
	DefaultMaxSeries  = 10000
	defaultIntervalMs = 300000
)

// ErrUnknownSubscription: the push names a subscription the client is no
// longer on (Kafka's UNKNOWN_SUBSCRIPTION_ID); the client asks again.
var ErrUnknownSubscription = errors.New("telemetry: unknown subscription id")

// ErrThrottled: the client pushed before its interval ended
// (THROTTLING_QUOTA_EXCEEDED).
var ErrThrottled = errors.New("telemetry: pushed before the push interval ended")

// Subscription is one client-metrics subscription, from its configs.
type Subscription struct {
	Name       string
	Metrics    []string
	IntervalMs int32
	Match      map[string]*regexp.Regexp
}

// Client is what a subscription matches on.
type Client struct {
	InstanceID      string
	ClientID        string
	SoftwareName    string
	SoftwareVersion string
	SourceAddress   string
	SourcePort      string
}

func (c Client) selector(key string) string {
	switch key {
	case "client_instance_id":
		return c.InstanceID
	case "client_id":
		return c.ClientID
	case "client_software_name":
		return c.SoftwareName
	case "client_software_version":
		return c.SoftwareVersion
	case "client_source_address":
		return c.SourceAddress
	case "client_source_port":
		return c.SourcePort
	}
	return ""
}

// Plan is what a client is asked to push.
type Plan struct {
	// SubscriptionID changes whenever the matched subscriptions do.
	SubscriptionID int32
	// Metrics are the requested name prefixes; [""] asks for every
	// metric, none for no metric.
	Metrics    []string
	IntervalMs int32
}

// Select merges the subscriptions matching c, as Kafka's
// ClientMetricsManager: the union of their metrics and the smallest
// interval; no match asks for nothing at the default interval.
func Select(subs []Subscription, c Client) Plan {
	subs = append([]Subscription(nil), subs...)
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name < subs[j].Name })
	p := Plan{IntervalMs: defaultIntervalMs}
	set := map[string]bool{}
	h := crc32.NewIEEE()
	matched := false
	for _, s := range subs {
		if !matches(s, c) {
			continue
		}
		if !matched || s.IntervalMs < p.IntervalMs {
			p.IntervalMs = s.IntervalMs
		}
		matched = true
		fmt.Fprintf(h, "%s|%d|%s;", s.Name, s.IntervalMs, strings.Join(s.Metrics, ","))
		for _, m := range s.Metrics {
			if m == "*" {
				m = ""
			}
			set[m] = true
		}
	}
	if set[""] {
		p.Metrics = []string{""}
	} else {
		for m := range set {
			p.Metrics = append(p.Metrics, m)
		}
		sort.Strings(p.Metrics)
	}
	fmt.Fprintf(h, "%s", c.InstanceID)
	p.SubscriptionID = int32(h.Sum32())
	return p
}

func matches(s Subscription, c Client) bool {
	for key, re := range s.Match {
		if !re.MatchString(c.selector(key)) {
			return false
		}
	}
	return true
}

// Config bounds what pushes may cost.
type Config struct {
	// MaxBytes is telemetry.max.bytes: the largest payload accepted.
	MaxBytes int32
	// MaxSeries bounds the series kept across all clients; a new series
	// beyond it is dropped and counted.
	MaxSeries int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

type seriesKey struct {
	name, instance, principal, attrs string
}

type series struct {
	attrs   []Attribute
	value   float64
	counter bool
}

type clientState struct {
	principal  string
	lastPush   time.Time
	intervalMs int32
}

// Store keeps the latest pushed value of every series.
type Store struct {
	cfg Config

	mu      sync.Mutex // guards series, clients, dropped
	series  map[seriesKey]*series
	clients map[string]*clientState
	dropped uint64
}

// NewStore returns an empty store.
func NewStore(cfg Config) *Store {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxSeries < 0 {
		cfg.MaxSeries = 0
	}
	return &Store{cfg: cfg, series: map[seriesKey]*series{}, clients: map[string]*clientState{}}
}

// MaxBytes is the payload limit told to clients.
func (s *Store) MaxBytes() int32 { return s.cfg.MaxBytes }

// Push records one push from a client whose subscriptions are now plan:
// payload is the uncompressed OTLP MetricsData. subscriptionID must be
// plan's (a client whose subscriptions changed asks for them again). A
// terminating push (the client is closing) is accepted at any time and
// removes the client's series: nothing will refresh them.
func (s *Store) Push(instance, principal string, plan Plan, subscriptionID int32, terminating bool, payload []byte) error {
	if plan.SubscriptionID != subscriptionID {
		return fmt.Errorf("%w: %d, the current one is %d", ErrUnknownSubscription, subscriptionID, plan.SubscriptionID)
	}
	now := s.cfg.Now()
	s.mu.Lock()
	cs, ok := s.clients[instance]
	if !ok {
		cs = &clientState{}
		s.clients[instance] = cs
	}
	// Kafka allows one push per interval; half of it absorbs jitter.
	if !terminating && !cs.lastPush.IsZero() && now.Sub(cs.lastPush) < time.Duration(plan.IntervalMs)*time.Millisecond/2 {
		s.mu.Unlock()
		return ErrThrottled
	}
	cs.principal, cs.intervalMs, cs.lastPush = principal, plan.IntervalMs, now
	s.mu.Unlock()

	points, err := DecodeMetrics(payload, max(s.cfg.MaxSeries, 1)*4)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if terminating {
		s.forgetLocked(instance)
		return nil
	}
	for _, p := range points {
		k := seriesKey{name: p.Name, instance: instance, principal: principal, attrs: attrKey(p.Attributes)}
		sr, ok := s.series[k]
		if !ok {
			if len(s.series) >= s.cfg.MaxSeries {
				s.dropped++
				continue
			}
			sr = &series{attrs: p.Attributes}
			s.series[k] = sr
		}
		sr.value, sr.counter = p.Value, p.Counter
	}
	return nil
}

func (s *Store) forgetLocked(instance string) {
	for k := range s.series {
		if k.instance == instance {
			delete(s.series, k)
		}
	}
	delete(s.clients, instance)
}

// expireLocked forgets clients that missed three push intervals.
func (s *Store) expireLocked(now time.Time) {
	for id, cs := range s.clients {
		last := cs.lastPush
		if last.IsZero() {
			continue
		}
		if now.Sub(last) > 3*time.Duration(cs.intervalMs)*time.Millisecond {
			s.forgetLocked(id)
		}
	}
}

func attrKey(as []Attribute) string {
	var b strings.Builder
	for _, a := range as {
		b.WriteString(a.Key)
		b.WriteByte(0)
		b.WriteString(a.Value)
		b.WriteByte(0)
	}
	return b.String()
}

var (
	descDropped = prometheus.NewDesc("gregor_client_telemetry_dropped_series_total",
		"Client telemetry series dropped because the series limit (telemetry_max_series) was reached.", nil, nil)
	descSeries = prometheus.NewDesc("gregor_client_telemetry_series",
		"Client telemetry series kept.", nil, nil)
)

// Describe implements prometheus.Collector. It describes nothing: the
// store is an unchecked collector, its series' names and labels come from
// the clients.
func (s *Store) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: every kept series as
// kafka_client_<metric name with dots as underscores>, labelled with
// client_instance_id, principal and the data point's attributes (the
// union of a metric's attribute keys, empty where a point lacks one).
func (s *Store) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.cfg.Now())
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(s.dropped))
	ch <- prometheus.MustNewConstMetric(descSeries, prometheus.GaugeValue, float64(len(s.series)))

	type family struct {
		keys    []string
		counter bool
		members []seriesKey
	}
	fams := map[string]*family{}
	for k, sr := range s.series {
		name := PrometheusName(k.name)
		f, ok := fams[name]
		if !ok {
			f = &family{counter: sr.counter}
			fams[name] = f
		}
		for _, a := range sr.attrs {
			if l := labelName(a.Key); !contains(f.keys, l) {
				f.keys = append(f.keys, l)
			}
		}
		f.members = append(f.members, k)
	}
	for name, f := range fams {
		sort.Strings(f.keys)
		labels := append([]string{"client_instance_id", "principal"}, f.keys...)
		typ, help := prometheus.GaugeValue, "Client metric pushed by KIP-714 telemetry."
		if f.counter {
			typ = prometheus.CounterValue
		}
		desc := prometheus.NewDesc(name, help, labels, nil)
		for _, k := range f.members {
			sr := s.series[k]
			vals := make([]string, len(labels))
			vals[0], vals[1] = k.instance, k.principal
			for _, a := range sr.attrs {
				for i, l := range f.keys {
					if l == labelName(a.Key) {
						vals[2+i] = a.Value
					}
				}
			}
			m, err := prometheus.NewConstMetric(desc, typ, sr.value, vals...)
			if err == nil {
				ch <- m
			}
		}
	}
}

// PrometheusName is the exported name of a client metric.
func PrometheusName(metric string) string { return "kafka_client_" + labelName(metric) }

func labelName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	if name := string(b); name == "client_instance_id" || name == "principal" {
		return "attr_" + name
	}
	return string(b)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// ParseSubscription builds a subscription from its configs (as validated
// by the controller).
func ParseSubscription(name string, configs map[string]string, parseMatch func(string) (map[string]*regexp.Regexp, error)) (Subscription, error) {
	s := Subscription{Name: name, IntervalMs: defaultIntervalMs}
	for _, m := range strings.Split(configs["metrics"], ",") {
		if m = strings.TrimSpace(m); m != "" {
			s.Metrics = append(s.Metrics, m)
		}
	}
	if v, ok := configs["interval.ms"]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return s, fmt.Errorf("telemetry: subscription %q: interval.ms %q: %w", name, v, err)
		}
		s.IntervalMs = int32(n)
	}
	match, err := parseMatch(configs["match"])
	if err != nil {
		return s, fmt.Errorf("telemetry: subscription %q: %w", name, err)
	}
	s.Match = match
	return s, nil
}
