//go:build wasip1

package partitioner

import "github.com/gregorbroker/gregor/sdk/wasm/guest"

//go:wasmexport gregor_partition
func exportPartition(ptr, n uint32, count, numPartitions int32) int32 {
	buf := guest.Input(ptr, n)
	if buf == nil {
		return 1 // abi.CodeBadInput
	}
	return Handle(buf, count, numPartitions)
}

//go:wasmexport gregor_record_fields
func exportRecordFields() int32 { return fields }
