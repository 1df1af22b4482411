package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/config"
)

func TestParseBenchSecurity(t *testing.T) {
	got, err := parseBenchSecurity([]string{"PLAINTEXT", " ssl", "sasl_ssl"})
	if err != nil || len(got) != 3 || got[0] != benchPlaintext || got[2] != benchSASLSSL {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := parseBenchSecurity([]string{"sasl_plaintext"}); err == nil {
		t.Fatal("sasl_plaintext accepted")
	}
}

// TestBenchOverTLSAndSASL runs a small bench case on each listener of the
// in-process broker.
func TestBenchOverTLSAndSASL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	targets, stop, err := startBenchBroker(ctx, config.DurabilityPageCache, []string{benchPlaintext, benchSSL, benchSASLSSL})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if len(targets) != 3 {
		t.Fatalf("%d targets", len(targets))
	}
	for _, target := range targets {
		res, err := runBenchCase(ctx, io.Discard, target, benchCase{Size: 100, Partitions: 1, Acks: "all"}, 500)
		if err != nil {
			t.Fatalf("%s: %v", target.Security, err)
		}
		if res.Security != target.Security || res.ProduceRecordsPS <= 0 || res.ConsumeRecordsPS <= 0 {
			t.Fatalf("%s: %+v", target.Security, res)
		}
	}
}
