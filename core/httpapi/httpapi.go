// Package httpapi serves Gregor's HTTP endpoints on the http listener:
// Prometheus metrics at /metrics and liveness at /healthz. It reads state
// through the narrow views it is given and changes nothing.
package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health reports whether the broker is serving; nil means healthy.
type Health func() error

// Handler returns the HTTP handler for the admin listener.
func Handler(gatherer prometheus.Gatherer, health Health) http.Handler {
	mux := http.NewServeMux()
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
