package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// steadyLatency produces at rate to the source for warmup+d and measures,
// on the target, the time from each record's timestamp (set by the
// producer when it hands the record over) to the moment a consumer of the
// target polls it. The same clients and the same method serve every
// mirror; the records of the warm-up (client connections, metadata, the
// mirror's first fetches of new data, a JVM's JIT) are read but not
// counted.
func steadyLatency(rate int, warmup, d time.Duration) (p50, p99 float64, err error) {
	ends, err := endOffsets(targetAddr, targetTopic())
	if err != nil {
		return 0, 0, err
	}
	offsets := map[int32]kgo.Offset{}
	for p, e := range ends {
		offsets[p] = kgo.NewOffset().At(e)
	}
	cons, err := newClient(targetAddr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{targetTopic(): offsets}),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		return 0, 0, err
	}
	defer cons.Close()
	prod, err := newClient(sourceAddr, kgo.ProducerLinger(0))
	if err != nil {
		return 0, 0, err
	}
	defer prod.Close()
	skip := int(float64(rate) * warmup.Seconds())
	n := int(float64(rate) * d.Seconds())
	go func() {
		interval := time.Second / time.Duration(rate)
		next := time.Now()
		for i := 0; i < skip+n; i++ {
			v := make([]byte, recordSize)
			_, _ = rand.Read(v)
			key := "l" + strconv.Itoa(i-skip)
			if i < skip {
				key = "w" + strconv.Itoa(i)
			}
			prod.Produce(context.Background(), &kgo.Record{Topic: topic, Key: []byte(key), Value: v,
				Timestamp: time.Now()}, nil)
			next = next.Add(interval)
			if w := time.Until(next); w > 0 {
				time.Sleep(w)
			}
		}
	}()
	var lat []float64
	ctx, cancel := context.WithTimeout(context.Background(), warmup+d+60*time.Second)
	defer cancel()
	for len(lat) < n && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		now := time.Now()
		fs.EachRecord(func(r *kgo.Record) {
			if len(r.Key) > 0 && r.Key[0] == 'w' {
				return
			}
			lat = append(lat, float64(now.Sub(r.Timestamp).Microseconds())/1000)
		})
	}
	if len(lat) < n {
		return 0, 0, fmt.Errorf("%d of %d records arrived", len(lat), n)
	}
	sort.Float64s(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], nil
}

// latencyBuckets scrapes the Gregor mirror's replication latency histogram,
// summed over partitions: upper bound (seconds) -> cumulative count.
func latencyBuckets() map[float64]float64 {
	if mirrorMetrics == "" {
		return nil
	}
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + mirrorMetrics + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil
	}
	out := map[float64]float64{}
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "gregor_mirror_replication_latency_seconds_bucket{") {
			continue
		}
		i := strings.Index(l, `le="`)
		j := strings.LastIndexByte(l, ' ')
		if i < 0 || j < 0 {
			continue
		}
		le := l[i+4:]
		le = le[:strings.IndexByte(le, '"')]
		ub, err1 := strconv.ParseFloat(le, 64)
		n, err2 := strconv.ParseFloat(l[j+1:], 64)
		if err1 == nil && err2 == nil {
			out[ub] += n
		}
	}
	return out
}

// bucketQuantiles returns the upper bounds (ms) of the buckets holding
// the p50 and p99 of the observations between two scrapes.
func bucketQuantiles(before, after map[float64]float64) (p50, p99 float64, ok bool) {
	bounds := make([]float64, 0, len(after))
	for ub := range after {
		bounds = append(bounds, ub)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 {
		return 0, 0, false
	}
	total := after[bounds[len(bounds)-1]] - before[bounds[len(bounds)-1]]
	if total <= 0 {
		return 0, 0, false
	}
	p50, p99 = -1, -1
	for _, ub := range bounds {
		n := after[ub] - before[ub]
		if p50 < 0 && n >= total/2 {
			p50 = ub * 1000
		}
		if p99 < 0 && n >= total*0.99 {
			p99 = ub * 1000
		}
	}
	return p50, p99, true
}
