// Package httpapi serves Gregor's HTTP endpoints on the http listener:
// Prometheus metrics at /metrics, liveness at /healthz and, when given a
// Producer, produce-over-HTTP compatible with the Confluent REST Proxy v2
// (POST /topics/{topic}). It reaches the broker only through the narrow
// views it is given.
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
		mux.HandleFunc("POST /topics/{topic}", produceHandler(o.Producer, o.MaxBodyBytes))
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
