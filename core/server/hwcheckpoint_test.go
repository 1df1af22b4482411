package server

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/replication"
)

// TestShutdownWritesHighWatermarks: a clean stop leaves every partition's
// high watermark in the data dir's replication-offset-checkpoint, in Kafka's
// text format.
func TestShutdownWritesHighWatermarks(t *testing.T) {
	dir := t.TempDir()
	srv, stop := startServer(t, dir)
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()), kgo.DefaultProduceTopic("hw"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "hw"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 7; i++ {
		r := &kgo.Record{Value: []byte("v"), Partition: int32(i % 2)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	stop()

	b, err := os.ReadFile(filepath.Join(dir, "replication-offset-checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		t.Fatalf("replication-offset-checkpoint = %q", b)
	}
	if n, err := strconv.Atoi(lines[1]); err != nil || n != len(lines)-2 {
		t.Fatalf("replication-offset-checkpoint count %q for %d entries", lines[1], len(lines)-2)
	}
	got := map[string]bool{}
	for _, l := range lines[2:] {
		got[l] = true
	}
	for _, want := range []string{"hw 0 4", "hw 1 3"} {
		if !got[want] {
			t.Fatalf("replication-offset-checkpoint %q lacks %q", b, want)
		}
	}
}

// TestReplicationConfigReachesFetchersAndISR: [replication] keys become the
// follower fetch and ISR settings.
func TestReplicationConfigReachesFetchersAndISR(t *testing.T) {
	cfg, err := config.Parse(`node_id = 3
[replication]
replica_lag_time_max_ms = 12000
replica_fetch_max_bytes = 65536
replica_fetch_response_max_bytes = 524288
replica_fetch_min_bytes = 8
replica_fetch_wait_max_ms = 100
replica_fetch_backoff_ms = 250
`)
	if err != nil {
		t.Fatal(err)
	}
	f := fetcherConfig(cfg)
	want := replication.FetcherConfig{NodeID: 3, MaxWait: 100 * time.Millisecond, MinBytes: 8, MaxBytes: 524288,
		PartitionMaxBytes: 65536, Backoff: 250 * time.Millisecond, Sync: true}
	if f != want {
		t.Fatalf("fetcher config %+v, want %+v", f, want)
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	if lag := isrConfig(cfg).LagTimeMax; lag != 12*time.Second {
		t.Fatalf("ISR lag %v, want 12s", lag)
	}
	// The defaults are Kafka's, as the replication package has them.
	d := config.Default()
	if f, want := fetcherConfig(d), replication.DefaultFetcherConfig(d.NodeID); f.MaxWait != want.MaxWait ||
		f.MinBytes != want.MinBytes || f.MaxBytes != want.MaxBytes || f.PartitionMaxBytes != want.PartitionMaxBytes ||
		f.Backoff != want.Backoff {
		t.Fatalf("default fetcher config %+v, want %+v", f, want)
	}
	if isrConfig(d).LagTimeMax != replication.DefaultReplicaLagTimeMax {
		t.Fatalf("default ISR lag %v", isrConfig(d).LagTimeMax)
	}
}
