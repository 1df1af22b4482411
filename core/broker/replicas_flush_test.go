package broker

import (
	"math"
	"testing"

	"github.com/gregorbroker/gregor/core/config"
)

func TestPartitionConfigFlushPolicy(t *testing.T) {
	bc := config.Default()
	if lc := PartitionConfig(bc, map[string]string{}).Log; lc.FlushMessages != math.MaxInt64 || lc.FlushMs != math.MaxInt64 {
		t.Fatalf("flush defaults differ from Kafka's: messages %d ms %d", lc.FlushMessages, lc.FlushMs)
	}
	lc := PartitionConfig(bc, map[string]string{"flush.messages": "3", "flush.ms": "250"}).Log
	if lc.FlushMessages != 3 || lc.FlushMs != 250 {
		t.Fatalf("topic overrides not applied: messages %d ms %d", lc.FlushMessages, lc.FlushMs)
	}
	if err := lc.Validate(); err != nil {
		t.Fatal(err)
	}
	// log.flush_interval_messages / log.flush_interval_ms are the defaults.
	bc.Log.FlushIntervalMessages, bc.Log.FlushIntervalMs = 10, 500
	if lc := PartitionConfig(bc, map[string]string{}).Log; lc.FlushMessages != 10 || lc.FlushMs != 500 {
		t.Fatalf("broker defaults not applied: messages %d ms %d", lc.FlushMessages, lc.FlushMs)
	}
	if lc := PartitionConfig(bc, map[string]string{"flush.messages": "1"}).Log; lc.FlushMessages != 1 {
		t.Fatalf("topic override under a broker default: %d", lc.FlushMessages)
	}
}
