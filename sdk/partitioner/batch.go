package partitioner

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// BatchPartitioner chooses partitions for a batch of records at once:
// out[i] receives the partition of records[i]. It is the hot-path form of the
// contract: a WebAssembly or out-of-process partitioner pays its call cost
// once per batch instead of once per record.
//
// PartitionBatch returns an error, leaving out unspecified, when
// len(out) < len(records), when numPartitions < 1, or when the
// implementation fails; it never returns a partition outside
// [0, numPartitions) without an error.
type BatchPartitioner interface {
	PartitionBatch(records []Record, numPartitions int32, out []int32) error
}

// ErrPartitionOutOfRange is returned (wrapped) when a partitioner chose a
// partition outside [0, numPartitions).
var ErrPartitionOutOfRange = errors.New("partition out of range")

// ErrNoPartitions is returned (wrapped) for a partition count below 1.
var ErrNoPartitions = errors.New("partition count must be at least 1")

// CheckBatch validates the arguments of a PartitionBatch call.
func CheckBatch(records []Record, numPartitions int32, out []int32) error {
	if numPartitions < 1 {
		return fmt.Errorf("partitioner: %d partitions: %w", numPartitions, ErrNoPartitions)
	}
	if len(out) < len(records) {
		return fmt.Errorf("partitioner: output holds %d partitions for %d records", len(out), len(records))
	}
	return nil
}

// CheckPartition reports ErrPartitionOutOfRange when p is not in
// [0, numPartitions).
func CheckPartition(p, numPartitions int32) error {
	if p < 0 || p >= numPartitions {
		return fmt.Errorf("partitioner: partition %d of %d: %w", p, numPartitions, ErrPartitionOutOfRange)
	}
	return nil
}

// Batch turns a per-record Partitioner into a BatchPartitioner. The result
// checks every partition the Partitioner returns.
func Batch(p Partitioner) BatchPartitioner { return batchOf{p} }

type batchOf struct{ p Partitioner }

func (b batchOf) PartitionBatch(records []Record, numPartitions int32, out []int32) error {
	if err := CheckBatch(records, numPartitions, out); err != nil {
		return err
	}
	for i := range records {
		part := b.p.Partition(records[i], numPartitions)
		if err := CheckPartition(part, numPartitions); err != nil {
			return fmt.Errorf("partitioner: record %d: %w", i, err)
		}
		out[i] = part
	}
	return nil
}

// Murmur2Batch is Kafka's default placement of keyed records as a
// BatchPartitioner: KeyPartition for every keyed record, and records with a
// null key spread round-robin. It is safe for concurrent use, so it can
// serve as the fallback of a shared extension.
type Murmur2Batch struct{ next atomic.Uint32 }

// PartitionBatch implements BatchPartitioner.
func (m *Murmur2Batch) PartitionBatch(records []Record, numPartitions int32, out []int32) error {
	if err := CheckBatch(records, numPartitions, out); err != nil {
		return err
	}
	for i := range records {
		if records[i].Key != nil {
			out[i] = KeyPartition(records[i].Key, numPartitions)
			continue
		}
		out[i] = int32((m.next.Add(1) - 1) % uint32(numPartitions))
	}
	return nil
}
