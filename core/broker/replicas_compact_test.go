package broker

import (
	"math"
	"testing"

	"github.com/gregorbroker/gregor/core/config"
)

func TestPartitionConfigCleanupPolicy(t *testing.T) {
	bc := config.Default()
	tests := []struct {
		name            string
		topic           map[string]string
		compact, delete bool
	}{
		{"broker default", map[string]string{}, false, true},
		{"compact", map[string]string{"cleanup.policy": "compact"}, true, false},
		{"compact,delete", map[string]string{"cleanup.policy": "compact,delete"}, true, true},
		{"spaced list", map[string]string{"cleanup.policy": "delete, compact"}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lc := PartitionConfig(bc, tc.topic).Log
			if lc.Compact != tc.compact || lc.Delete != tc.delete {
				t.Fatalf("compact %v delete %v, want %v %v", lc.Compact, lc.Delete, tc.compact, tc.delete)
			}
			if lc.DeleteRetentionMs != 86_400_000 || lc.MinCleanableDirtyRatio != 0.5 || lc.MinCompactionLagMs != 0 || lc.MaxCompactionLagMs != math.MaxInt64 {
				t.Fatalf("compaction defaults differ from Kafka's: %+v", lc)
			}
		})
	}
	lc := PartitionConfig(bc, map[string]string{
		"cleanup.policy": "compact", "delete.retention.ms": "1000", "min.cleanable.dirty.ratio": "0.25",
		"min.compaction.lag.ms": "5", "max.compaction.lag.ms": "60000",
	}).Log
	if lc.DeleteRetentionMs != 1000 || lc.MinCleanableDirtyRatio != 0.25 || lc.MinCompactionLagMs != 5 || lc.MaxCompactionLagMs != 60000 {
		t.Fatalf("topic overrides not applied: %+v", lc)
	}
	if err := lc.Validate(); err != nil {
		t.Fatal(err)
	}
	// The broker's log.cleanup_policy is the default for topics.
	bc.Log.CleanupPolicy = "compact"
	if lc := PartitionConfig(bc, map[string]string{}).Log; !lc.Compact || lc.Delete {
		t.Fatalf("broker policy compact: %+v", lc)
	}
}
