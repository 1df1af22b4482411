package config

// Telemetry bounds client telemetry (KIP-714): the metrics Kafka clients
// push with PushTelemetry and Gregor exports on /metrics.
type Telemetry struct {
	// MaxBytes is the largest push accepted (Kafka's telemetry.max.bytes).
	MaxBytes int32 `toml:"max_bytes"`
	// MaxSeries bounds the client series kept across all clients; a new
	// series past it is dropped and counted in
	// gregor_client_telemetry_dropped_series_total. 0 keeps none (clients
	// still push without errors).
	MaxSeries int `toml:"max_series"`
}

func defaultTelemetry() Telemetry { return Telemetry{MaxBytes: 1 << 20, MaxSeries: 10000} }

func (t *Telemetry) validate(bad func(key, format string, args ...any) error) error {
	switch {
	case t.MaxBytes < 1:
		return bad("telemetry.max_bytes", "%d must be at least 1", t.MaxBytes)
	case t.MaxSeries < 0:
		return bad("telemetry.max_series", "%d must not be negative", t.MaxSeries)
	}
	return nil
}
