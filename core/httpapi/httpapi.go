// Package httpapi serves Gregor's HTTP endpoints on the http listener:
// Prometheus metrics at /metrics, liveness at /healthz, the admin API at
// /api/v1 (JSON, described by openapi.yaml), the embedded web console at
// /console/ and, when given a Producer, produce-over-HTTP compatible with
// the Confluent REST Proxy v2 (POST /topics/{topic}). The handlers reach
// the broker only through the narrow views they are given (Admin, Producer,
// Authenticator). BrokerView is the broker's Admin: it reads the owners the
// Kafka handlers ask (the controller's image, the hosted partitions, the
// group coordinator, the extensions) and asks the broker's authorizer about
// the principal that the authentication wrapper puts in the request's
// context; SASLAuthenticator checks HTTP credentials with the Kafka
// listeners' SASL mechanisms; MetricsCollector exports cluster, group lag,
// share and fetch session figures. It never imports core/api: what it needs
// of the protocol layer comes in as functions.
package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health reports whether the broker is serving; nil means healthy.
type Health func() error

// Options are the views the HTTP listener serves from.
type Options struct {
	Gatherer prometheus.Gatherer
	Health   Health
	// Producer serves POST /topics/{topic}; nil leaves it out.
	Producer Producer
	// MaxBodyBytes bounds a produce request's body; default 100 MiB.
	MaxBodyBytes int64
	// Admin serves the admin API and the console; nil leaves both out.
	Admin Admin
	// Mirrors lists mirror links; nil answers an empty list.
	Mirrors MirrorLinks
	// LagHistory is the groups' sampled lag for the console's chart.
	LagHistory *LagHistory
	// Auth checks credentials of the admin API and produce requests;
	// RequireAuth refuses requests without credentials (when every
	// Kafka listener authenticates too).
	Auth        Authenticator
	RequireAuth bool
}

// Handler returns the HTTP handler for metrics and health only.
func Handler(gatherer prometheus.Gatherer, health Health) http.Handler {
	return NewHandler(Options{Gatherer: gatherer, Health: health})
}

// NewHandler returns the HTTP handler for the http listener.
func NewHandler(o Options) http.Handler {
	gatherer, health := o.Gatherer, o.Health
	mux := http.NewServeMux()
	if o.Producer != nil {
		if o.MaxBodyBytes <= 0 {
			o.MaxBodyBytes = 100 << 20
		}
		mux.Handle("POST /topics/{topic}", authenticate(o.Auth, o.RequireAuth, produceHandler(o.Producer, o.MaxBodyBytes)))
	}
	if o.Admin != nil {
		adminRoutes(mux, o)
		consoleRoutes(mux)
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := health(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(map[string]string{"status": "unavailable", "error": err.Error()})
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
	})
	return mux
}
