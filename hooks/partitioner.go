package hooks

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

// Partitioner is a WebAssembly partitioner: it implements the sdk's
// partitioner.BatchPartitioner (one guest call per batch, split only when
// the encoded batch is over MaxCallBytes) and partitioner.Partitioner.
type Partitioner struct {
	m        *Module
	fallback partitioner.BatchPartitioner
}

// LoadPartitioner loads the partitioner module at path. fallback places a
// batch when the module fails (trap, timeout, memory limit, bad partition,
// error code); nil rejects the batch with the module's error instead. The
// failure is logged either way. fallback is called from many goroutines
// (partitioner.Murmur2Batch is safe for that).
func LoadPartitioner(ctx context.Context, path string, o Options, fallback partitioner.BatchPartitioner) (*Partitioner, error) {
	m, err := Load(ctx, path, KindPartitioner, o)
	if err != nil {
		return nil, err
	}
	return &Partitioner{m: m, fallback: fallback}, nil
}

// Module returns the underlying module (Reload, Watch, Info, Close).
func (p *Partitioner) Module() *Module { return p.m }

// Close closes the module.
func (p *Partitioner) Close(ctx context.Context) error { return p.m.Close(ctx) }

// PartitionBatch implements partitioner.BatchPartitioner.
func (p *Partitioner) PartitionBatch(records []partitioner.Record, numPartitions int32, out []int32) error {
	return p.PartitionBatchContext(context.Background(), records, numPartitions, out)
}

// Partition implements partitioner.Partitioner for one record. A failure
// with no fallback places the record by Kafka's rule, since the
// per-record interface has no error; use PartitionBatch to see errors.
func (p *Partitioner) Partition(r partitioner.Record, numPartitions int32) int32 {
	var out [1]int32
	if err := p.PartitionBatch([]partitioner.Record{r}, numPartitions, out[:]); err != nil {
		return partitioner.KeyPartition(r.Key, numPartitions)
	}
	return out[0]
}

// PartitionBatchContext is PartitionBatch under ctx, which bounds the wait
// for an instance and, with a CallTimeout, the call.
func (p *Partitioner) PartitionBatchContext(ctx context.Context, records []partitioner.Record, numPartitions int32, out []int32) error {
	if err := partitioner.CheckBatch(records, numPartitions, out); err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	err := p.run(ctx, records, numPartitions, out)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("hooks: partitioner %s: %w", p.m.path, err)
	if p.fallback == nil {
		return err
	}
	p.m.opts.Logger.Warn("hooks: partitioner failed; using the fallback", "module", p.m.path, "err", err)
	return p.fallback.PartitionBatch(records, numPartitions, out)
}

func (p *Partitioner) run(ctx context.Context, records []partitioner.Record, numPartitions int32, out []int32) error {
	g, in, err := p.m.acquire(ctx)
	if err != nil {
		return err
	}
	var failed error
	defer func() { p.m.put(ctx, g, in, failed) }()
	for len(records) > 0 {
		n, err := p.chunk(ctx, in, records, numPartitions, out)
		if err != nil {
			if isInstanceFailure(err) {
				failed = err
			}
			return err
		}
		records, out = records[n:], out[n:]
	}
	return nil
}

// chunk encodes as many records as fit MaxCallBytes, calls the guest once
// and checks the partitions. It returns how many records it placed.
func (p *Partitioner) chunk(ctx context.Context, in *instance, records []partitioner.Record, numPartitions int32, out []int32) (int, error) {
	limit := p.m.opts.MaxCallBytes
	size, count := 0, 0
	for count < len(records) {
		rs := 4 + abi.RecordSize(&records[count], in.fields)
		if size+rs > limit {
			break
		}
		size += rs
		count++
	}
	if count == 0 {
		return 0, fmt.Errorf("%w: record of %d bytes, limit %d", ErrTooLarge, 4+abi.RecordSize(&records[0], in.fields), limit)
	}
	view, err := in.buffer(ctx, size, p.m.opts)
	if err != nil {
		return 0, err
	}
	off := 4 * count
	for i := 0; i < count; i++ {
		off += abi.PutRecord(view[off:], &records[i], in.fields)
	}
	in.stack[0], in.stack[1], in.stack[2], in.stack[3] = uint64(in.bufPtr), uint64(size), uint64(count), uint64(numPartitions)
	if err := in.invoke(ctx, in.fn, p.m.opts); err != nil {
		return 0, err
	}
	if code := int32(in.stack[0]); code != abi.OK {
		return 0, &GuestError{Code: code}
	}
	res, err := in.output(4 * count)
	if err != nil {
		return 0, err
	}
	for i := 0; i < count; i++ {
		part := int32(binary.LittleEndian.Uint32(res[4*i:]))
		if part < 0 || part >= numPartitions {
			return 0, fmt.Errorf("record %d: %w", i, partitioner.CheckPartition(part, numPartitions))
		}
		out[i] = part
	}
	return count, nil
}
