package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// TestCompactedTopicEndToEnd produces several values per key to a compacted
// user topic with tiny segments and waits for the broker's cleaner to leave
// exactly the latest value of each key, at its original offset.
func TestCompactedTopicEndToEnd(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = ""
	cfg.Log.CleanerBackoffMs = 20
	srv, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	defer func() {
		stopRun()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic = "compacted"
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	str := func(s string) *string { return &s }
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": str("compact"), "segment.bytes": str("2048"),
	}, topic); err != nil {
		t.Fatal(err)
	}

	// Ten keys written in one batch per round; the last round writes only
	// the even keys, so the cleaner must rewrite the batch before it with
	// the odd keys alone (lz4, offsets with gaps). Then distinct filler keys
	// roll the data out of the active segment.
	latest := map[string]struct {
		value  string
		offset int64
	}{}
	for round := 0; round < 8; round++ {
		var rs []*kgo.Record
		for i := 0; i < 10; i++ {
			if round == 7 && i%2 == 1 {
				continue
			}
			rs = append(rs, &kgo.Record{Key: []byte(fmt.Sprint("key-", i)), Value: []byte(fmt.Sprintf("value-%d-%d", i, round))})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			latest[string(r.Key)] = struct {
				value  string
				offset int64
			}{string(r.Value), r.Offset}
		}
	}
	for i := 0; i < 40; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint("filler-", i)), Value: make([]byte, 100)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)

	// Poll the topic's contents until the cleaner has compacted it.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		seen := consumeAll(ctx, t, srv.KafkaAddr(), topic, end.Offset)
		compacted := true
		for key, want := range latest {
			got := seen[key]
			if len(got) != 1 {
				compacted = false
				break
			}
			if got[0].value != want.value || got[0].offset != want.offset {
				t.Fatalf("key %s: kept %+v, want %s at %d", key, got[0], want.value, want.offset)
			}
		}
		if compacted {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic not compacted in time: %v", seen["key-0"])
		case <-tick.C:
		}
	}
}

type consumed struct {
	value  string
	offset int64
}

// consumeAll reads partition 0 of topic from the start up to end with a
// fresh consumer.
func consumeAll(ctx context.Context, t *testing.T, addr, topic string, end int64) map[string][]consumed {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := map[string][]consumed{}
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume: %v", err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		last := int64(-1)
		fs.EachRecord(func(r *kgo.Record) {
			out[string(r.Key)] = append(out[string(r.Key)], consumed{string(r.Value), r.Offset})
			last = r.Offset
		})
		if last >= end-1 {
			return out
		}
	}
}
