package hooks

import (
	"context"
	"fmt"
	"testing"

	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

func TestGoGuestMatchesBuiltin(t *testing.T) {
	path := hookstest.BuildGo(t, "testdata/murmur")
	ctx := context.Background()
	p, err := LoadPartitioner(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	recs := make([]partitioner.Record, 5000)
	for i := range recs {
		recs[i].Key = []byte(fmt.Sprintf("key-%d", i))
	}
	out := make([]int32, len(recs))
	for _, n := range []int32{1, 2, 7, 64} {
		if err := p.PartitionBatch(recs, n, out); err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			if want := partitioner.KeyPartition(r.Key, n); out[i] != want {
				t.Fatalf("n=%d key %q: %d want %d", n, r.Key, out[i], want)
			}
		}
	}
}
