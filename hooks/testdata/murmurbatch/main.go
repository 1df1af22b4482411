// Command murmurbatch is a benchmark guest: Kafka's murmur2 placement of
// keys written with the SDK's batch registration (partitioner.RegisterBatch).
package main

import "github.com/gregorbroker/gregor/sdk/wasm/partitioner"

func init() {
	partitioner.Uses(partitioner.Key)
	partitioner.RegisterBatch(func(recs []partitioner.Record, n int32, out []int32) error {
		for i := range recs {
			out[i] = int32(partitioner.KeyPartition(recs[i].Key, int(n)))
		}
		return nil
	})
}

func main() {}
