package config

import (
	"strings"
	"testing"
)

func TestReplicationSection(t *testing.T) {
	tests := []struct {
		name, toml string
		wantErr    string // empty: valid
		check      func(Replication) bool
	}{
		{"defaults are Kafka's", "", "", func(r Replication) bool {
			return r.ReplicaLagTimeMaxMs == 30000 && r.ReplicaFetchMaxBytes == 1048576 &&
				r.ReplicaFetchResponseMaxBytes == 10485760 && r.ReplicaFetchMinBytes == 1 &&
				r.ReplicaFetchWaitMaxMs == 500 && r.ReplicaFetchBackoffMs == 1000 &&
				r.ReplicaHighWatermarkCheckpointIntervalMs == 5000
		}},
		{"every key set", `[replication]
replica_lag_time_max_ms = 10000
replica_fetch_max_bytes = 2097152
replica_fetch_response_max_bytes = 4194304
replica_fetch_min_bytes = 16
replica_fetch_wait_max_ms = 250
replica_fetch_backoff_ms = 200
replica_high_watermark_checkpoint_interval_ms = 1000`, "", func(r Replication) bool {
			return r == Replication{10000, 2097152, 4194304, 16, 250, 200, 1000, 1}
		}},
		{"unknown key", "[replication]\nreplica_lag_max_ms = 5", "unknown key replication.replica_lag_max_ms", nil},
		{"zero lag", "[replication]\nreplica_lag_time_max_ms = 0", "replication.replica_lag_time_max_ms", nil},
		{"zero fetch bytes", "[replication]\nreplica_fetch_max_bytes = 0", "replication.replica_fetch_max_bytes", nil},
		{"huge fetch bytes", "[replication]\nreplica_fetch_max_bytes = 2000000000", "replication.replica_fetch_max_bytes", nil},
		{"negative response bytes", "[replication]\nreplica_fetch_response_max_bytes = -1", "replication.replica_fetch_response_max_bytes", nil},
		{"zero min bytes", "[replication]\nreplica_fetch_min_bytes = 0", "replication.replica_fetch_min_bytes", nil},
		{"wait above lag", "[replication]\nreplica_lag_time_max_ms = 400\nreplica_fetch_wait_max_ms = 500",
			"replication.replica_fetch_wait_max_ms", nil},
		{"zero wait", "[replication]\nreplica_fetch_wait_max_ms = 0", "replication.replica_fetch_wait_max_ms", nil},
		{"zero backoff", "[replication]\nreplica_fetch_backoff_ms = 0", "replication.replica_fetch_backoff_ms", nil},
		{"zero checkpoint interval", "[replication]\nreplica_high_watermark_checkpoint_interval_ms = 0",
			"replication.replica_high_watermark_checkpoint_interval_ms", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse(tt.toml)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want an error naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg.Replication) {
				t.Fatalf("replication = %+v", cfg.Replication)
			}
		})
	}
}
