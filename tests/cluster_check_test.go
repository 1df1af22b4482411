package tests

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ackWriter produces unique values ("<prefix>-<n>", keyed by the value)
// with an idempotent acks=all producer and remembers where each
// acknowledged value was written.
type ackWriter struct {
	cl     *kgo.Client
	topic  string
	prefix string

	mu     sync.Mutex               // guards acked, failed, sent
	acked  map[string]recordAddress // value -> acknowledged partition and offset
	failed map[string]error
	sent   int
}

// recordAddress is a partition and offset.
type recordAddress struct {
	Partition int32
	Offset    int64
}

func newAckWriter(cl *kgo.Client, topic, prefix string) *ackWriter {
	return &ackWriter{cl: cl, topic: topic, prefix: prefix, acked: map[string]recordAddress{}, failed: map[string]error{}}
}

// ackWriterOpts are the producer options of every writer: acks=all
// (idempotent by franz-go's default), retries until a long delivery timeout.
func ackWriterOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.RecordDeliveryTimeout(3 * time.Minute),
		kgo.ProducerLinger(0),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.MetadataMinAge(250 * time.Millisecond),
	}
}

// run produces with at most window records in flight until ctx is done,
// then flushes what is in flight (bounded by flushCtx).
func (w *ackWriter) run(ctx, flushCtx context.Context, window int) {
	sem := make(chan struct{}, window)
	for i := 0; ; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			_ = w.cl.Flush(flushCtx)
			return
		}
		v := fmt.Sprintf("%s-%09d", w.prefix, i)
		w.mu.Lock()
		w.sent++
		w.mu.Unlock()
		w.cl.Produce(flushCtx, &kgo.Record{Topic: w.topic, Key: []byte(v), Value: []byte(v)}, func(r *kgo.Record, err error) {
			w.mu.Lock()
			if err != nil {
				w.failed[v] = err
			} else {
				w.acked[v] = recordAddress{r.Partition, r.Offset}
			}
			w.mu.Unlock()
			<-sem
		})
	}
}

// counts returns the acknowledged, failed and sent counts.
func (w *ackWriter) counts() (acked, failed, sent int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked), len(w.failed), w.sent
}

// waitAcked polls until at least n values are acknowledged.
func (w *ackWriter) waitAcked(t testing.TB, n int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		a, f, s := w.counts()
		if a >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("writer %s: %d acknowledged (want %d), %d failed, %d sent after %v", w.prefix, a, n, f, s, limit)
		}
		time.Sleep(20 * time.Millisecond) // polling progress of a remote cluster
	}
}

// drainTopic reads every partition of topic from its start up to ends with
// a fresh consumer and returns the records in the order each partition
// delivered them.
func drainTopic(ctx context.Context, seeds []string, topic string, ends map[int32]int64) ([]*kgo.Record, error) {
	parts := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	for p, end := range ends {
		if end > 0 {
			parts[p] = kgo.NewOffset().AtStart()
			want[p] = end
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var got []*kgo.Record
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return got, fmt.Errorf("draining %s: %d records read, partitions not at their end: %v", topic, len(got), want)
		}
		var ferr error
		fs.EachError(func(_ string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("draining %s partition %d: %w", topic, p, err)
			}
		})
		if ferr != nil {
			return got, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, r)
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	return got, nil
}

// checkReport is what the checker found; every count must be zero.
type checkReport struct {
	Acked, Read            int
	Lost                   []string // acknowledged, never read
	Duplicated             []string // read at more than one offset
	Moved                  []string // read at an offset other than the acknowledged one
	Conflicts              []string // one offset holding different values
	NonMonotonic           []string // offsets going backwards or repeating in one reader's stream
	Foreign                []string // values no writer sent
	UnackedPresent, Failed int
}

func (r checkReport) ok() bool {
	return len(r.Lost)+len(r.Duplicated)+len(r.Moved)+len(r.Conflicts)+len(r.NonMonotonic)+len(r.Foreign) == 0
}

func (r checkReport) String() string {
	first := func(s []string) string {
		sort.Strings(s)
		return strings.Join(s[:min(len(s), 10)], " ")
	}
	return fmt.Sprintf("acked %d, read %d, unacknowledged present %d, failed %d; lost %d [%s], duplicated %d [%s], moved %d [%s], same offset different values %d [%s], non-monotonic %d [%s], foreign %d [%s]",
		r.Acked, r.Read, r.UnackedPresent, r.Failed,
		len(r.Lost), first(r.Lost), len(r.Duplicated), first(r.Duplicated), len(r.Moved), first(r.Moved),
		len(r.Conflicts), first(r.Conflicts), len(r.NonMonotonic), first(r.NonMonotonic), len(r.Foreign), first(r.Foreign))
}

// checkRecords compares what the writers had acknowledged with what a
// reader read. isOurs says whether a value was sent by a writer.
func checkRecords(writers []*ackWriter, got []*kgo.Record, isOurs func(string) bool) checkReport {
	var rep checkReport
	acked := map[string]recordAddress{}
	for _, w := range writers {
		w.mu.Lock()
		for v, a := range w.acked {
			acked[v] = a
		}
		rep.Failed += len(w.failed)
		w.mu.Unlock()
	}
	rep.Acked, rep.Read = len(acked), len(got)
	seen := map[string][]recordAddress{}
	atOffset := map[recordAddress]string{}
	last := map[int32]int64{}
	for _, r := range got {
		v := string(r.Value)
		at := recordAddress{r.Partition, r.Offset}
		if prev, ok := last[r.Partition]; ok && r.Offset <= prev {
			rep.NonMonotonic = append(rep.NonMonotonic, fmt.Sprintf("p%d:%d-after-%d", r.Partition, r.Offset, prev))
		}
		last[r.Partition] = r.Offset
		if old, ok := atOffset[at]; ok && old != v {
			rep.Conflicts = append(rep.Conflicts, fmt.Sprintf("p%d@%d:%s|%s", at.Partition, at.Offset, old, v))
		}
		atOffset[at] = v
		if !isOurs(v) {
			rep.Foreign = append(rep.Foreign, fmt.Sprintf("p%d@%d:%q", at.Partition, at.Offset, v))
			continue
		}
		if !slicesContainsAddr(seen[v], at) {
			seen[v] = append(seen[v], at)
		}
	}
	for v, where := range seen {
		if len(where) > 1 {
			rep.Duplicated = append(rep.Duplicated, fmt.Sprintf("%s@%v", v, where))
		}
		a, ok := acked[v]
		if !ok {
			rep.UnackedPresent++
			continue
		}
		if !slicesContainsAddr(where, a) {
			rep.Moved = append(rep.Moved, fmt.Sprintf("%s:acked-p%d@%d-read-%v", v, a.Partition, a.Offset, where))
		}
	}
	for v := range acked {
		if len(seen[v]) == 0 {
			rep.Lost = append(rep.Lost, v)
		}
	}
	return rep
}

func slicesContainsAddr(s []recordAddress, a recordAddress) bool {
	for _, x := range s {
		if x == a {
			return true
		}
	}
	return false
}
