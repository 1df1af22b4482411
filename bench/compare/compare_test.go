package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func TestParseConsumerPerf(t *testing.T) {
	out := "WARN something\n2026-12-02 05:40:01:123, 2026-12-02 05:40:05:456, 195.3125, 45.07, 200000, 46153.8, 612, 3721, 52.49, 53748.99\n"
	got, err := parseConsumerPerf(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := (consumerPerf{mbps: 45.07, rebalanceMs: 612, fetchMBps: 52.49}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, err := parseConsumerPerf("no summary here\n"); err == nil {
		t.Fatal("no error for output without a summary line")
	}
}

func TestPayloads(t *testing.T) {
	for _, size := range []int{100, 1024} {
		for _, pl := range []payload{randomKeyed, jsonLZ4, jsonZstd} {
			recs := pl.records(size, 64)
			keys := map[string]bool{}
			for i, r := range recs {
				if len(r.Value) != size {
					t.Fatalf("%v: value %d is %d bytes, want %d", pl, i, len(r.Value), size)
				}
				if pl != randomKeyed && !json.Valid(r.Value) {
					t.Fatalf("%v: value %d is not JSON: %s", pl, i, r.Value)
				}
				keys[string(r.Key)] = true
			}
			if len(keys) < 50 {
				t.Fatalf("%v: %d distinct keys in 64 records, want them drawn from %d", pl, len(keys), keySpace)
			}
		}
	}
	// The JSON values compress as event streams do (several times), the random ones not at all.
	ratio := func(pl payload) float64 {
		var raw bytes.Buffer
		for _, r := range pl.records(1024, 256) {
			raw.Write(r.Value)
		}
		enc, _ := zstd.NewWriter(nil)
		return float64(raw.Len()) / float64(len(enc.EncodeAll(raw.Bytes(), nil)))
	}
	if r := ratio(jsonZstd); r < 2 || r > 20 {
		t.Fatalf("JSON values compress %.1fx, want a realistic 2-20x", r)
	}
	if r := ratio(randomKeyed); r > 1.05 {
		t.Fatalf("random values compress %.2fx, want incompressible", r)
	}
}

func TestLimitFor(t *testing.T) {
	l := limits{LoopbackMBps: 3000, WriteMBps: 1500, WriteSyncMBps: 200}
	for _, tc := range []struct {
		metric, unit, durability string
		want                     float64
	}{
		{"franz-go produce 1 KB", "MB/s", "page_cache", 1500},
		{"franz-go produce 1 KB", "MB/s", "fsync", 200},
		{"franz-go consume 1 KB", "MB/s", "fsync", 3000},
		{"ConsumerPerformance fetch phase (fetch.MB.sec)", "MB/s", "page_cache", 3000},
		{"latency p99", "ms", "page_cache", 0},
	} {
		if got := l.limitFor(tc.metric, tc.unit, tc.durability); got != tc.want {
			t.Errorf("limitFor(%q, %s, %s) = %v, want %v", tc.metric, tc.unit, tc.durability, got, tc.want)
		}
	}
}

func TestIntendedAt(t *testing.T) {
	start := time.Unix(1000, 0)
	// 1,000 records/s: record i is due i ms after the start, however late earlier ones went out.
	for _, tc := range []struct {
		rate, i int
		want    time.Duration
	}{{1000, 0, 0}, {1000, 1, time.Millisecond}, {1000, 2500, 2500 * time.Millisecond}, {3, 1, time.Second / 3}, {3, 3, time.Second}} {
		if got := intendedAt(start, tc.rate, tc.i).Sub(start); got != tc.want {
			t.Errorf("intendedAt(rate %d, %d) = +%v, want +%v", tc.rate, tc.i, got, tc.want)
		}
	}
}

func TestStamp(t *testing.T) {
	v := []byte("0123456789abcdef")
	at := time.Unix(1700000000, 123456789)
	s := stampValue(v, at)
	if string(v) != "0123456789abcdef" {
		t.Fatal("stampValue changed its input")
	}
	if len(s) != len(v) || string(s[8:]) != "89abcdef" {
		t.Fatalf("stamped value %q keeps neither size nor tail", s)
	}
	if got, ok := stampOf(s); !ok || !got.Equal(at) {
		t.Fatalf("stampOf = %v %v, want %v", got, ok, at)
	}
	if _, ok := stampOf([]byte("short")); ok {
		t.Fatal("stampOf accepted a 5-byte value")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1000; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	sortDurations(d)
	for _, tc := range []struct{ p, want float64 }{{0.5, 500}, {0.99, 990}, {0.999, 999}, {1, 1000}, {0, 1}} {
		if got := percentile(d, tc.p); got != tc.want {
			t.Errorf("percentile(%v) = %v ms, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile(nil, 0.99); got != 0 {
		t.Errorf("percentile of nothing = %v", got)
	}
}

func TestParseJavaEndToEnd(t *testing.T) {
	out := "WARN x\nTopic \"t\" does not exist. Will create topic with 1 partition(s) and replication factor = 1\n" +
		"Avg latency: 1.2345 ms\nPercentiles: 50th = 1, 99th = 4, 99.9th = 12\n"
	got, err := parseJavaEndToEnd(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := [3]float64{1, 4, 12}; got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := parseJavaEndToEnd("Avg latency: 1.2 ms\n"); err == nil {
		t.Fatal("no error for output without the percentile line")
	}
}

func TestFillPlainControllerKafka(t *testing.T) {
	base := clusterPrefix + "franz-go produce 1 KB records, 3 partitions"
	m := map[string]map[string]float64{
		base:                                 {"gregor": 50, "kafka": 20},
		plainControllerMetric(base):          {"gregor": 55},
		"only plain" + plainControllerSuffix: {"gregor": 1},
	}
	fillPlainControllerKafka(m)
	if got := m[plainControllerMetric(base)]; got["kafka"] != 20 || got["gregor"] != 55 {
		t.Fatalf("plain row = %v, want gregor 55 and the SSL row's kafka 20", got)
	}
	if got := m["only plain"+plainControllerSuffix]["kafka"]; got != 0 {
		t.Fatalf("row without an SSL twin got kafka %v", got)
	}
	if got := m[base]; got["kafka"] != 20 || got["gregor"] != 50 {
		t.Fatalf("SSL row changed: %v", got)
	}
}

func TestIdleConnHelpers(t *testing.T) {
	req := apiVersionsV0()
	if len(req) != 14 || binary.BigEndian.Uint32(req) != 10 || binary.BigEndian.Uint16(req[4:]) != 18 {
		t.Fatalf("ApiVersions frame %x", req)
	}
	st := "Name:\tgregor\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n"
	if got, err := statusKB(st, "VmRSS:"); err != nil || got != 100 {
		t.Fatalf("VmRSS = %v %v, want 100 MiB", got, err)
	}
	if _, err := statusKB(st, "VmSwap:"); err == nil {
		t.Fatal("no error for a missing line")
	}
	if got := perItemKB(10, 1000); got != 10.24 {
		t.Fatalf("perItemKB(10 MiB, 1000) = %v, want 10.24 KB", got)
	}
	if got := idleConnSteps(options{full: true}); len(got) != 4 || got[3] != 10000 {
		t.Fatalf("full steps %v", got)
	}
}

func TestPartitionShares(t *testing.T) {
	s := partitionShares(100, 50)
	seen := map[int32]bool{}
	for i, share := range s {
		if len(share) != 2 {
			t.Fatalf("consumer %d has %v, want 2 partitions", i, share)
		}
		for _, p := range share {
			if seen[p] {
				t.Fatalf("partition %d dealt twice", p)
			}
			seen[p] = true
		}
	}
	if len(seen) != 100 {
		t.Fatalf("%d partitions dealt, want 100", len(seen))
	}
	if s := partitionShares(3, 5); len(s[3]) != 0 || len(s[0]) != 1 {
		t.Fatalf("3 over 5: %v", s)
	}
}
