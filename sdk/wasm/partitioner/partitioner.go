// Package partitioner is the guest side of a WebAssembly partitioner: a Go
// module registers a function from record and partition count to partition,
// and this package exports gregor_partition, which decodes a whole batch from
// the exchange buffer, calls the function once per record and writes the
// partitions back. It owns the decoding and range checks, never placement.
package partitioner

import (
	"encoding/binary"

	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

// Record is what a partitioner sees of a record. Its slices alias the
// exchange buffer: copy anything kept past the call.
type Record = partitioner.Record

// Header is a record header.
type Header = partitioner.Header

// Fields a partitioner reads, for Uses.
const (
	Key     = abi.FieldKey
	Value   = abi.FieldValue
	Headers = abi.FieldHeaders
)

var (
	handler func(r Record, numPartitions int) int
	fields  int32 = abi.AllFields
	dec     abi.RecordDecoder
)

// Register makes fn the module's partitioner. fn must return a partition in
// [0, numPartitions); anything else fails the batch and the broker applies
// its fallback. Call Register from an init function.
func Register(fn func(r Record, numPartitions int) int) { handler = fn }

// Uses tells the broker which fields fn reads (Key|Headers, say); the
// others arrive as nil, which saves copying record values into the module.
// The default is every field.
func Uses(f int32) { fields = f & abi.AllFields }

// Fields returns what Uses set.
func Fields() int32 { return fields }

// KeyPartition is Kafka's placement of a keyed record:
// (murmur2(key) & 0x7fffffff) % numPartitions.
func KeyPartition(key []byte, numPartitions int) int {
	return int(partitioner.KeyPartition(key, int32(numPartitions)))
}

// Handle runs the registered partitioner over an encoded batch: the first
// 4*count bytes of buf receive the partitions, the records follow. It
// returns an ABI result code. A panic in the handler is caught and reported
// as CodeFailed.
func Handle(buf []byte, count, numPartitions int32) (code int32) {
	if handler == nil {
		return abi.CodeNoHandler
	}
	slots := abi.SlotsSize(int(count), 4)
	if count < 0 || numPartitions < 1 || slots > len(buf) {
		return abi.CodeBadInput
	}
	defer func() {
		if recover() != nil {
			code = abi.CodeFailed
		}
	}()
	out := buf[:slots]
	n := int(numPartitions)
	err := dec.Decode(buf[slots:], int(count), func(i int, r Record) error {
		p := handler(r, n)
		if p < 0 || p >= n {
			return errOutOfRange
		}
		binary.LittleEndian.PutUint32(out[4*i:], uint32(p))
		return nil
	})
	switch err {
	case nil:
		return abi.OK
	case errOutOfRange:
		return abi.CodeFailed
	}
	return abi.CodeBadInput
}

type rangeError struct{}

func (rangeError) Error() string { return "partition out of range" }

var errOutOfRange error = rangeError{}
