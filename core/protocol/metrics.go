package protocol

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metrics are the wire-level Prometheus metrics. A nil *Metrics records nothing.
type Metrics struct {
	requests    *prometheus.CounterVec
	errors      *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	bytesInC    prometheus.Counter
	bytesOutC   prometheus.Counter
	sendfileC   prometheus.Counter
	connections prometheus.Gauge
	accepted    prometheus.Counter
	authFail    prometheus.Counter
	authOK      prometheus.Counter
	refused     prometheus.Counter
	throttles   prometheus.Counter
	muted       prometheus.Gauge
	queuedResp  prometheus.Gauge
	queuedReq   prometheus.Gauge
}

// NewMetrics registers the wire metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gregor_requests_total", Help: "Kafka requests answered, by API.",
		}, []string{"api"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gregor_request_errors_total", Help: "Requests that could not be decoded, by API key.",
		}, []string{"api"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gregor_request_duration_seconds",
			Help:    "Time from a request's arrival to its response being written, by API.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14),
		}, []string{"api"}),
		bytesInC: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gregor_network_bytes_in_total", Help: "Bytes of Kafka requests read.",
		}),
		bytesOutC: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gregor_network_bytes_out_total", Help: "Bytes of Kafka responses written.",
		}),
		sendfileC: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gregor_network_bytes_sendfile_total", Help: "Bytes of Kafka responses sent from segment files to sockets by sendfile, never copied through the broker (part of gregor_network_bytes_out_total).",
		}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gregor_connections", Help: "Open Kafka connections.",
		}),
		accepted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gregor_connections_accepted_total", Help: "Kafka connections accepted.",
		}),
		authFail: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gregor_failed_authentication_total", Help: "Failed SASL authentications and TLS handshakes.",
		}),
		authOK: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gregor_successful_authentication_total", Help: "Successful SASL authentications.",
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gregor_connections_refused_total", Help: "Kafka connections refused by a connection limit or creation rate.",
		}),
		throttles: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gregor_throttled_requests_total", Help: "Responses throttled for a client quota.",
		}),
		muted: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gregor_connections_muted", Help: "Kafka connections not read from while their responses are unsent or the request bytes are at queued_max_request_bytes.",
		}),
		queuedResp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gregor_queued_response_bytes", Help: "Encoded response bytes waiting to be written, all connections.",
		}),
		queuedReq: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gregor_queued_request_bytes", Help: "Bytes of requests read and not yet answered, all connections.",
		}),
	}
	reg.MustRegister(m.requests, m.errors, m.latency, m.bytesInC, m.bytesOutC, m.sendfileC, m.connections, m.accepted, m.authFail, m.authOK,
		m.refused, m.throttles, m.muted, m.queuedResp, m.queuedReq)
	return m
}

func apiLabel(key int16) string {
	if n := kmsg.NameForKey(key); n != "" {
		return n
	}
	return strconv.Itoa(int(key))
}

func (m *Metrics) observe(key int16, d time.Duration) {
	if m == nil {
		return
	}
	l := apiLabel(key)
	m.requests.WithLabelValues(l).Inc()
	m.latency.WithLabelValues(l).Observe(d.Seconds())
}

func (m *Metrics) requestError(key int16) {
	if m != nil {
		m.errors.WithLabelValues(apiLabel(key)).Inc()
	}
}

func (m *Metrics) bytesIn(n int) {
	if m != nil {
		m.bytesInC.Add(float64(n))
	}
}

func (m *Metrics) bytesSentfile(n int) {
	if m != nil && n > 0 {
		m.sendfileC.Add(float64(n))
	}
}

func (m *Metrics) bytesOut(n int) {
	if m != nil {
		m.bytesOutC.Add(float64(n))
	}
}

func (m *Metrics) connOpened() {
	if m != nil {
		m.connections.Inc()
		m.accepted.Inc()
	}
}

func (m *Metrics) connClosed() {
	if m != nil {
		m.connections.Dec()
	}
}

func (m *Metrics) authFailed() {
	if m != nil {
		m.authFail.Inc()
	}
}

func (m *Metrics) authSucceeded() {
	if m != nil {
		m.authOK.Inc()
	}
}

func (m *Metrics) connRefused() {
	if m != nil {
		m.refused.Inc()
	}
}

func (m *Metrics) throttled() {
	if m != nil {
		m.throttles.Inc()
	}
}

func (m *Metrics) mutedBy(d float64) {
	if m != nil {
		m.muted.Add(d)
	}
}

func (m *Metrics) queuedResponseBytes(d int64) {
	if m != nil {
		m.queuedResp.Add(float64(d))
	}
}

func (m *Metrics) queuedRequestBytes(d int64) {
	if m != nil {
		m.queuedReq.Add(float64(d))
	}
}
