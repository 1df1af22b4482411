// Command murmurref is a benchmark guest: Kafka's murmur2 placement of keys
// written with the SDK's by-pointer registration (partitioner.RegisterRef).
package main

import "github.com/gregorbroker/gregor/sdk/wasm/partitioner"

func init() {
	partitioner.Uses(partitioner.Key)
	partitioner.RegisterRef(func(r *partitioner.Record, n int) int {
		return partitioner.KeyPartition(r.Key, n)
	})
}

func main() {}
