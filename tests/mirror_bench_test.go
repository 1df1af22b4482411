package tests

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/mirror"
)

// BenchmarkMirrorCopy and BenchmarkMirrorLink report mirror throughput
// (records/s, MB/s) for 1 KB records between two in-process brokers on
// loopback, catching up 20,000 records over 6 partitions, and the
// replication latency of single records once caught up (p50, p99). Run by
// make bench.
func BenchmarkMirrorCopy(b *testing.B) { benchMirror(b, mirror.ModeCopy) }
func BenchmarkMirrorLink(b *testing.B) { benchMirror(b, mirror.ModeLink) }

func benchMirror(b *testing.B, mode string) {
	const records, size = 20000, 1024
	for i := 0; i < b.N; i++ {
		east := startBroker(b, fastLog)
		west := startBroker(b, fastLog)
		createTopic(b, east.Addr, "orders", mirrorPartitions, nil)
		createTopic(b, east.Addr, "orders.probe", 1, nil)
		value := make([]byte, size)
		cl, err := kgo.NewClient(kgo.SeedBrokers(east.Addr), kgo.ProducerLinger(5*time.Millisecond))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for n := 0; n < records; n++ {
			cl.Produce(ctx, &kgo.Record{Topic: "orders", Value: value}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		ends := endOffsets(b, east.Addr, "orders")
		cfg := benchMirrorConfig(b, east.Addr, west.Addr, mode)
		b.ResetTimer()
		start := time.Now()
		m, err := mirror.New(cfg, mirror.RunOptions{RetryBackoff: 200 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- m.Run(mctx) }()
		waitMirrored(b, west.Addr, "east.orders", ends, 120*time.Second)
		elapsed := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(records)/elapsed.Seconds(), "records/s")
		b.ReportMetric(float64(records*size)/elapsed.Seconds()/1e6, "MB/s")

		// Latency: one record at a time, from produce to consumable on
		// the target.
		waitMirrored(b, west.Addr, "east.orders.probe", map[int32]int64{0: 0}, 30*time.Second)
		consumer, err := kgo.NewClient(kgo.SeedBrokers(west.Addr), kgo.FetchMaxWait(50*time.Millisecond),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"east.orders.probe": {0: kgo.NewOffset().At(0)}}))
		if err != nil {
			b.Fatal(err)
		}
		var lat []time.Duration
		for n := 0; n < 100; n++ {
			sent := time.Now()
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders.probe", Value: value}).FirstErr(); err != nil {
				b.Fatal(err)
			}
			pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
			for got := false; !got; {
				fs := consumer.PollFetches(pctx)
				if pctx.Err() != nil {
					b.Fatal("probe record not mirrored within 10s")
				}
				got = fs.NumRecords() > 0
			}
			pcancel()
			lat = append(lat, time.Since(sent))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[50].Microseconds())/1000, "p50-latency-ms")
		b.ReportMetric(float64(lat[98].Microseconds())/1000, "p99-latency-ms")
		consumer.Close()
		cl.Close()
		cancel()
		<-done
	}
}

func benchMirrorConfig(b *testing.B, source, target, mode string) mirror.Config {
	cfg := mirror.Default()
	cfg.Source = mirror.Cluster{Name: "east", Bootstrap: []string{source}}
	cfg.Target = mirror.Cluster{Name: "west", Bootstrap: []string{target}}
	cfg.Topics.Include = []string{"orders.*"}
	cfg.Mirror.Mode = mode
	cfg.Mirror.RefreshIntervalMs = 200
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	return cfg
}
