package main

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"
)

// goDriver runs one scenario with one Go client library.
type goDriver func(ctx context.Context, env Env, scenario string) error

var goDrivers = map[string]goDriver{}

// rec is a record as the Go drivers see it, whatever the library.
type rec struct {
	Partition int32
	Offset    int64
	Key       []byte // nil is a null key
	Value     []byte
	Headers   [][2]string
	Timestamp time.Time
}

// codecs is the order in which produce_consume tries compression codecs.
var codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// pcRecords is produce_consume's record set for one codec (SCENARIOS.md): 10 records, even
// indexes keyed, odd ones with a null key, two headers each.
func pcRecords(codec string) []rec {
	out := make([]rec, 10)
	for i := range out {
		r := rec{Value: []byte(fmt.Sprintf("value-%s-%d", codec, i)),
			Headers: [][2]string{{"h-index", fmt.Sprint(i)}, {"h-codec", codec}}}
		if i%2 == 0 {
			r.Key = []byte(fmt.Sprintf("key-%s-%d", codec, i))
		}
		out[i] = r
	}
	return out
}

// checkSameRecords compares what was consumed with what was produced, ignoring order across
// partitions: every produced value exactly once, with its key (null stays null) and headers.
func checkSameRecords(want, got []rec) error {
	byValue := map[string]rec{}
	for _, g := range got {
		if _, dup := byValue[string(g.Value)]; dup {
			return fmt.Errorf("value %q consumed twice", g.Value)
		}
		byValue[string(g.Value)] = g
	}
	for _, w := range want {
		g, ok := byValue[string(w.Value)]
		if !ok {
			return fmt.Errorf("value %q not consumed (got %d of %d records)", w.Value, len(got), len(want))
		}
		if (w.Key == nil) != (g.Key == nil) || !bytes.Equal(w.Key, g.Key) {
			return fmt.Errorf("value %q: key %s, want %s", w.Value, showKey(g.Key), showKey(w.Key))
		}
		if fmt.Sprint(w.Headers) != fmt.Sprint(g.Headers) {
			return fmt.Errorf("value %q: headers %v, want %v", w.Value, g.Headers, w.Headers)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("consumed %d records, produced %d", len(got), len(want))
	}
	return nil
}

func showKey(k []byte) string {
	if k == nil {
		return "null"
	}
	return fmt.Sprintf("%q", k)
}

// checkContiguous checks that one partition's records hold values prefix-0..n-1 at offsets
// from 0 in order, once each: what an idempotent producer must leave behind.
func checkContiguous(got []rec, prefix string, n int) error {
	sort.Slice(got, func(i, j int) bool { return got[i].Offset < got[j].Offset })
	if len(got) != n {
		return fmt.Errorf("consumed %d records, want %d", len(got), n)
	}
	for i, g := range got {
		want := fmt.Sprintf("%s-%d", prefix, i)
		if g.Offset != int64(i) || string(g.Value) != want {
			return fmt.Errorf("offset %d holds %q, want offset %d holding %q", g.Offset, g.Value, i, want)
		}
	}
	return nil
}

// txnValues lists what the transactions scenario must show a read_committed consumer.
func txnCommitted() []string {
	var out []string
	for _, p := range []string{"c1", "c2"} {
		for i := 0; i < 5; i++ {
			out = append(out, fmt.Sprintf("%s-%d", p, i))
		}
	}
	return out
}

func values(rs []rec) []string {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Partition != rs[j].Partition {
			return rs[i].Partition < rs[j].Partition
		}
		return rs[i].Offset < rs[j].Offset
	})
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Value)
	}
	return out
}

// eventually retries f until it succeeds or ctx ends, returning f's last error.
func eventually(ctx context.Context, every time.Duration, f func() error) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// Constants of the scenarios, shared with SCENARIOS.md and the external drivers.
const (
	idemCount     = 200
	groupParts    = 6
	groupPerPart  = 10
	tsCount       = 10
	tsStepMs      = 1000
	tsPickIndex   = 5
	adminDeleteTo = 4
)
