package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

func rec(key, region string) partitioner.Record {
	r := partitioner.Record{Key: []byte(key)}
	if region != "" {
		r.Headers = []partitioner.Header{{Key: "trace", Value: []byte("x")}, {Key: "region", Value: []byte(region)}}
	}
	return r
}

func TestPlace(t *testing.T) {
	regions = []string{"eu", "us", "ap"}
	for _, tc := range []struct {
		region string
		n      int
		lo, hi int // the partition must be in [lo, hi)
	}{
		{"eu", 12, 0, 4},
		{"us", 12, 4, 8},
		{"ap", 12, 8, 12},
		{"eu", 3, 0, 1},
		{"ap", 2, 0, 1}, // fewer partitions than regions: region index mod n
		{"us", 1, 0, 1},
	} {
		for i := 0; i < 200; i++ {
			p := place(rec(fmt.Sprint("k", i), tc.region), tc.n)
			if p < tc.lo || p >= tc.hi {
				t.Fatalf("region %s, %d partitions: %d not in [%d,%d)", tc.region, tc.n, p, tc.lo, tc.hi)
			}
		}
	}
	for _, region := range []string{"", "mars"} {
		r := rec("21", region)
		if got, want := place(r, 7), int(partitioner.KeyPartition(r.Key, 7)); got != want {
			t.Errorf("region %q: %d, want Kafka's %d", region, got, want)
		}
	}
}

func TestConfigure(t *testing.T) {
	defer func() { regions = []string{"eu", "us", "ap"} }()
	for _, tc := range []struct {
		raw string
		ok  bool
	}{
		{`{}`, true},
		{`{"regions":["north","south"]}`, true},
		{`{"regions":[]}`, false},
		{`{"regions":["a","a"]}`, false},
		{`{"regions":[""]}`, false},
		{`not json`, false},
	} {
		if err := configure([]byte(tc.raw)); (err == nil) != tc.ok {
			t.Errorf("configure(%s) = %v", tc.raw, err)
		}
	}
}

// TestModule builds the module and checks that the broker's host places
// records as the Go code does natively, under a configuration.
func TestModule(t *testing.T) {
	path := hookstest.BuildGo(t, ".")
	ctx := context.Background()
	p, err := hooks.LoadPartitioner(ctx, path, hooks.Options{Config: []byte(`{"regions":["eu","us","ap","sa"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	regions = []string{"eu", "us", "ap", "sa"}
	defer func() { regions = []string{"eu", "us", "ap"} }()
	var recs []partitioner.Record
	for i := 0; i < 2000; i++ {
		recs = append(recs, rec(fmt.Sprint("order-", i), []string{"eu", "us", "ap", "sa", "", "mars"}[i%6]))
	}
	out := make([]int32, len(recs))
	for _, n := range []int32{1, 3, 4, 16, 50} {
		if err := p.PartitionBatch(recs, n, out); err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			if want := place(r, int(n)); int(out[i]) != want {
				t.Fatalf("%d partitions, record %d: module %d, native %d", n, i, out[i], want)
			}
		}
	}
	if _, err := hooks.LoadPartitioner(ctx, path, hooks.Options{Config: []byte(`{"regions":[]}`)}); err == nil {
		t.Fatal("empty region list accepted")
	}
}
