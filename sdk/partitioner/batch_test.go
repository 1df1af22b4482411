package partitioner

import (
	"errors"
	"testing"
)

func TestBatchAdapters(t *testing.T) {
	keys := []string{"21", "foobar", "abc", ""}
	recs := make([]Record, 0, len(keys)+2)
	for _, k := range keys {
		recs = append(recs, Record{Key: []byte(k)})
	}
	recs = append(recs, Record{}, Record{})
	for _, tc := range []struct {
		name string
		bp   BatchPartitioner
	}{
		{"Batch(RoundRobin)", Batch(&RoundRobin{})},
		{"Murmur2Batch", &Murmur2Batch{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := make([]int32, len(recs))
			if err := tc.bp.PartitionBatch(recs, 7, out); err != nil {
				t.Fatal(err)
			}
			for i, k := range keys {
				if want := KeyPartition([]byte(k), 7); out[i] != want {
					t.Errorf("key %q: partition %d, want %d", k, out[i], want)
				}
			}
			if a, b := out[len(keys)], out[len(keys)+1]; a == b {
				t.Errorf("two null keys both went to %d, want round-robin", a)
			}
		})
	}
}

func TestBatchBadArguments(t *testing.T) {
	bad := Func(func(Record, int32) int32 { return 9 })
	recs := []Record{{Key: []byte("k")}}
	for _, tc := range []struct {
		name string
		bp   BatchPartitioner
		n    int32
		out  []int32
		want error
	}{
		{"zero partitions", Batch(&RoundRobin{}), 0, make([]int32, 1), ErrNoPartitions},
		{"negative partitions", &Murmur2Batch{}, -3, make([]int32, 1), ErrNoPartitions},
		{"short output", &Murmur2Batch{}, 3, nil, nil},
		{"out of range", Batch(bad), 3, make([]int32, 1), ErrPartitionOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.bp.PartitionBatch(recs, tc.n, tc.out)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}
