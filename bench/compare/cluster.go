package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The cluster section: three brokers on loopback, every topic RF=3 with min.insync.replicas=2,
// every write acks=all, so an acknowledgement waits for a follower's fetch as well as the leader.
const (
	clusterNodes      = 3
	clusterRF         = 3
	clusterMinISR     = "2"
	clusterPartitions = 6 // two leaders on each node when placement spreads them
	// clusterLatencyRate is the offered load of the latency runs, records a second.
	clusterLatencyRate = 1000
)

// clusterPrefix names every metric of the cluster section.
const clusterPrefix = "3 nodes RF=3 acks=all: "

// clusterTargets are the 3-node Gregor (scripts/interop-gregor.sh --nodes 3) and Apache Kafka
// (scripts/kafka-ref.sh --nodes 3) clusters, with the durability of the single-node runs.
func clusterTargets(o options) []target {
	gregorArgs := []string{"scripts/interop-gregor.sh", "start", "--nodes", fmt.Sprint(clusterNodes), "--durability", o.durability}
	kafkaArgs := []string{"scripts/kafka-ref.sh", "start", "--nodes", fmt.Sprint(clusterNodes)}
	if o.durability == "fsync" {
		kafkaArgs = append(kafkaArgs, "--fsync")
	}
	var gb, kb string
	var gpids, kpids []string
	for k := 1; k <= clusterNodes; k++ {
		gb += fmt.Sprintf(",127.0.0.1:%d", 28092+100*(k-1))
		kb += fmt.Sprintf(",127.0.0.1:%d", 29100+k)
		gpids = append(gpids, cacheDir(fmt.Sprintf("gregor-run/node%d/pid", k)))
		kpids = append(kpids, cacheDir(fmt.Sprintf("kafka-run/cluster-%d/node%d/pid", clusterNodes, k)))
	}
	return []target{
		{name: "gregor", cluster: true, bootstrap: gb[1:], start: func() error { return sh(gregorArgs...) },
			stop: func() { _ = sh("scripts/interop-gregor.sh", "stop") }, pidFiles: gpids},
		{name: "kafka", cluster: true, bootstrap: kb[1:], start: func() error { return sh(kafkaArgs...) },
			stop: func() { _ = sh("scripts/kafka-ref.sh", "stop", "--nodes", fmt.Sprint(clusterNodes)) }, pidFiles: kpids},
	}
}

// createClusterTopic creates an RF=3, min.insync.replicas=2 topic, retrying while the cluster
// does not yet count three live brokers (a broker registers a moment after it listens).
func createClusterTopic(ctx context.Context, bootstrap, topic string, parts int32) error {
	minISR := clusterMinISR
	configs := map[string]*string{"min.insync.replicas": &minISR}
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := createReplicated(ctx, bootstrap, topic, parts, clusterRF, configs)
		if err == nil || time.Now().After(deadline) || !errors.Is(err, kerr.InvalidReplicationFactor) {
			return err
		}
		time.Sleep(time.Second) // polling the cluster's registration, not synchronisation
	}
}

// measureCluster runs the cluster section against one started cluster: produce throughput of
// 100 B and 1 KB records (as fast as the client allows, the median of o.repeat runs) and produce
// latency at a fixed rate, p50 and p99, both with acks=all on RF=3 topics.
func measureCluster(t target, o options, record recordFn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	scaled := func(n int) int { return max(1000, int(float64(n)*o.scale)) }
	all := kgo.AllISRAcks()
	// Warm-up (JIT, page cache, connections, replica fetchers), not measured.
	if err := createClusterTopic(ctx, t.bootstrap, "bench-cluster-warmup", clusterPartitions); err != nil {
		return err
	}
	if _, _, err := produceThroughput(ctx, t.bootstrap, "bench-cluster-warmup", scaled(100_000), 1024, all, false, randomKeyed); err != nil {
		return fmt.Errorf("cluster warm-up: %w", err)
	}
	for _, size := range []int{100, 1024} {
		n := scaled(map[int]int{100: 500_000, 1024: 100_000}[size])
		topic := fmt.Sprintf("bench-cluster-%d", size)
		if err := createClusterTopic(ctx, t.bootstrap, topic, clusterPartitions); err != nil {
			return err
		}
		var mb, rec []float64
		for r := 0; r < o.repeat; r++ {
			rps, mbps, err := produceThroughput(ctx, t.bootstrap, topic, n, size, all, false, randomKeyed)
			if err != nil {
				return fmt.Errorf("produce %s: %w", topic, err)
			}
			fmt.Fprintf(os.Stderr, "compare: %s cluster produce %dB %dp acks=all run %d: %.0f rec/s %.1f MB/s\n", t.name, size, clusterPartitions, r+1, rps, mbps)
			mb, rec = append(mb, mbps), append(rec, rps)
		}
		what := fmt.Sprintf("franz-go produce %s records, %d partitions", sizeName(size), clusterPartitions)
		record(t.name, clusterPrefix+what, "MB/s", "higher", median(mb))
		record(t.name, clusterPrefix+what+", records/s", "records/s", "higher", median(rec))
	}
	d := time.Duration(float64(10*time.Second) * min(1, o.scale*2))
	for _, size := range []int{100, 1024} {
		topic := fmt.Sprintf("bench-cluster-latency-%d", size)
		if err := createClusterTopic(ctx, t.bootstrap, topic, clusterNodes); err != nil {
			return err
		}
		lats, err := latencyAtRate(ctx, t.bootstrap, topic, size, clusterLatencyRate, d, randomKeyed)
		if err != nil {
			return fmt.Errorf("cluster latency run %s: %w", topic, err)
		}
		sortDurations(lats)
		for _, q := range []struct {
			name string
			p    float64
		}{{"p50", 0.50}, {"p99", 0.99}} {
			record(t.name, fmt.Sprintf("%sfranz-go produce latency at %d x %s/s, %d partitions, %s", clusterPrefix,
				clusterLatencyRate, sizeName(size), clusterNodes, q.name), "ms", "lower", percentile(lats, q.p))
		}
	}
	return nil
}

// measureClusterCommits is the cluster section's offset commit rows (the coordinator's write
// waits for the ISR of an RF=3 __consumer_offsets partition).
func measureClusterCommits(t target, o options, record recordFn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return measureCommits(ctx, t, clusterPrefix, clusterRF, o.scale, record)
}

func sizeName(size int) string {
	if size%1024 == 0 {
		return fmt.Sprintf("%d KB", size/1024)
	}
	return fmt.Sprintf("%d B", size)
}
