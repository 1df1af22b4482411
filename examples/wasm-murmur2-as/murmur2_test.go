// Package murmur2as tests the AssemblyScript murmur2 partitioner against
// Gregor's built-in placement of keyed records.
package murmur2as

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// keys returns n keys: Kafka's golden inputs, every length from 0 to 64,
// printable ids and random bytes (a fixed seed, so failures repeat).
func keys(n int) [][]byte {
	out := [][]byte{[]byte("21"), []byte("foobar"), []byte("abc"), []byte("a-little-bit-long-string")}
	rng := rand.New(rand.NewPCG(5, 42))
	for l := 0; l <= 64; l++ {
		k := make([]byte, l)
		for i := range k {
			k[i] = byte(rng.IntN(256))
		}
		out = append(out, k)
	}
	for i := 0; len(out) < n; i++ {
		if i%2 == 0 {
			out = append(out, []byte(fmt.Sprintf("customer-%d", i)))
			continue
		}
		k := make([]byte, rng.IntN(48))
		for j := range k {
			k[j] = byte(rng.IntN(256))
		}
		out = append(out, k)
	}
	return out
}

func load(t *testing.T) *hooks.Partitioner {
	t.Helper()
	path := hookstest.BuildAssemblyScript(t, ".", "build/murmur2.wasm")
	ctx := context.Background()
	p, err := hooks.LoadPartitioner(ctx, path, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}

// TestEqualsBuiltin proves the module places 100,000 keys exactly as the
// built-in for every partition count from 1 to 64.
func TestEqualsBuiltin(t *testing.T) {
	p := load(t)
	ks := keys(100_000)
	recs := make([]partitioner.Record, len(ks))
	for i, k := range ks {
		recs[i] = partitioner.Record{Key: k, Value: []byte("v"), Headers: []partitioner.Header{{Key: "h", Value: []byte("x")}}}
	}
	out := make([]int32, len(recs))
	for n := int32(1); n <= 64; n++ {
		if err := p.PartitionBatch(recs, n, out); err != nil {
			t.Fatalf("%d partitions: %v", n, err)
		}
		for i, k := range ks {
			if want := partitioner.KeyPartition(k, n); out[i] != want {
				t.Fatalf("%d partitions, key %q: module chose %d, built-in %d", n, k, out[i], want)
			}
		}
	}
	if f := p.Module().Info().RecordFields; f != 1 {
		t.Errorf("record fields %d, want keys only (1)", f)
	}
}

// TestNullKeysRoundRobin checks records without a key spread over every
// partition.
func TestNullKeysRoundRobin(t *testing.T) {
	p := load(t)
	recs := make([]partitioner.Record, 12)
	out := make([]int32, len(recs))
	if err := p.PartitionBatch(recs, 4, out); err != nil {
		t.Fatal(err)
	}
	seen := map[int32]int{}
	for _, part := range out {
		seen[part]++
	}
	for part := int32(0); part < 4; part++ {
		if seen[part] != 3 {
			t.Fatalf("partition %d got %d of 12 null-key records: %v", part, seen[part], out)
		}
	}
}
