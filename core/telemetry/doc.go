// Package telemetry owns client telemetry (KIP-714): which metrics a
// client is asked to push (its client-metrics subscriptions), the pushed
// OTLP metrics decoded into series, and their export as Prometheus metrics
// labelled with the client instance id and principal, bounded by a series
// limit. It reads subscriptions as plain config maps and must not import
// the protocol layer or the controller.
package telemetry
