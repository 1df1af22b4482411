package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// curvePartitions are the partition counts of the throughput-vs-partitions cost curve; --quick
// stops at 100 (creating 1,000 partitions on Kafka takes seconds of a one-minute run).
func curvePartitions(o options) []int32 {
	if o.quick {
		return []int32{1, 10, 100}
	}
	return []int32{1, 10, 100, 1000}
}

// e2eRate is the offered load of the end-to-end latency row, records per second.
const e2eRate = 1000

// measureCurves runs the end-to-end latency row and the throughput-vs-partitions curve on one
// broker (issue 17 items 2 and 5).
func measureCurves(ctx context.Context, t target, o options, record recordFn) error {
	if err := createTopic(ctx, t.bootstrap, "bench-e2e", 1); err != nil {
		return err
	}
	d := time.Duration(float64(10*time.Second) * min(1, o.scale*2))
	lats, err := endToEndAtRate(ctx, t.bootstrap, "bench-e2e", 1024, e2eRate, d)
	if err != nil {
		return fmt.Errorf("end-to-end latency run: %w", err)
	}
	sortDurations(lats)
	for _, q := range []struct {
		name string
		p    float64
	}{{"p50", 0.50}, {"p99", 0.99}, {"p99.9", 0.999}} {
		record(t.name, fmt.Sprintf("franz-go end-to-end latency at %d x 1 KB/s, acks=all, %s", e2eRate, q.name), "ms", "lower", percentile(lats, q.p))
	}
	if o.javaTools {
		jn := max(1000, int(20_000*o.scale))
		v, err := javaEndToEnd(t.bootstrap, "bench-e2e-java", jn, 1024)
		if err != nil {
			return err
		}
		for i, q := range []string{"p50", "p99", "p99.9"} {
			record(t.name, "EndToEndLatency 1 KB, acks=all, one at a time, "+q, "ms", "lower", v[i])
		}
	}
	if err := measureManyClients(ctx, t, o, record); err != nil {
		return err
	}
	n := max(2000, int(200_000*o.scale))
	for _, parts := range curvePartitions(o) {
		topic := fmt.Sprintf("bench-curve-%d", parts)
		if err := createTopic(ctx, t.bootstrap, topic, parts); err != nil {
			return err
		}
		_, mbps, err := produceThroughput(ctx, t.bootstrap, topic, n, 1024, kgo.LeaderAck(), true, randomKeyed)
		if err != nil {
			return fmt.Errorf("produce %s: %w", topic, err)
		}
		c, err := consumeThroughput(ctx, t.bootstrap, topic, n, 1024)
		if err != nil {
			return fmt.Errorf("consume %s: %w", topic, err)
		}
		fmt.Fprintf(os.Stderr, "compare: %s curve %d partitions: produce %.1f MB/s consume %.1f MB/s\n", t.name, parts, mbps, c)
		record(t.name, fmt.Sprintf("curve: franz-go produce 1 KB, %d partition(s), acks=1", parts), "MB/s", "higher", mbps)
		record(t.name, fmt.Sprintf("curve: franz-go consume 1 KB, %d partition(s)", parts), "MB/s", "higher", c)
	}
	return nil
}

// intendedAt is when record i of a run at rate records/s starting at start is due to be sent.
func intendedAt(start time.Time, rate, i int) time.Time {
	return start.Add(time.Duration(i) * time.Second / time.Duration(rate))
}

// stampValue writes the intended send time (Unix nanoseconds) into the first 8 bytes of a copy
// of v; the consumer reads it back with stampOf.
func stampValue(v []byte, intended time.Time) []byte {
	b := append([]byte(nil), v...)
	binary.BigEndian.PutUint64(b[:8], uint64(intended.UnixNano()))
	return b
}

func stampOf(v []byte) (time.Time, bool) {
	if len(v) < 8 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v[:8]))), true
}

// endToEndAtRate sends records of size bytes at rate per second for d (acks=all, linger 0) while
// a consumer in the same process reads them; each latency runs from the record's intended send
// time to its arrival at the consumer, so a stall that delays later sends is charged to them too
// (coordinated omission corrected).
func endToEndAtRate(ctx context.Context, bootstrap, topic string, size, rate int, d time.Duration) ([]time.Duration, error) {
	cons, err := client(bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	prod, err := client(bootstrap, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	// A marker record (stamp 0) goes first; timing starts once the consumer has received it, so
	// the consumer's start-up is not charged to the first records.
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: make([]byte, 8)}).FirstErr(); err != nil {
		return nil, err
	}
	recs := randomKeyed.records(size, 1024)
	n := int(float64(rate) * d.Seconds())
	lats := make([]time.Duration, 0, n)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		marker := false
		for len(lats) < n {
			fs := cons.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				done <- fmt.Errorf("received %d of %d: %w", len(lats), n, err)
				return
			}
			var ferr error
			fs.EachError(func(_ string, _ int32, err error) { ferr = err })
			if ferr != nil {
				done <- ferr
				return
			}
			now := time.Now()
			fs.EachRecord(func(r *kgo.Record) {
				at, ok := stampOf(r.Value)
				switch {
				case ok && at.UnixNano() == 0 && !marker:
					marker = true
					close(ready)
				case ok && at.UnixNano() != 0:
					lats = append(lats, now.Sub(at))
				}
			})
		}
		done <- nil
	}()
	select {
	case <-ready:
	case err := <-done:
		return nil, err
	}
	var mu sync.Mutex
	var prodErr error
	start := time.Now()
	for i := 0; i < n; i++ {
		intended := intendedAt(start, rate, i)
		if wait := time.Until(intended); wait > 0 {
			time.Sleep(wait) // pacing the offered load, not synchronisation
		}
		r := recs[i%len(recs)]
		r.Topic = topic
		r.Value = stampValue(r.Value, intended)
		prod.Produce(ctx, &r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				prodErr = errors.Join(prodErr, err)
				mu.Unlock()
			}
		})
	}
	if err := prod.Flush(ctx); err != nil {
		return nil, err
	}
	mu.Lock()
	perr := prodErr
	mu.Unlock()
	if perr != nil {
		return nil, perr
	}
	if err := <-done; err != nil {
		return nil, err
	}
	return lats, nil
}
