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
// the encoded batch is over MaxCallBytes).
type Partitioner struct {
	m *Module
}

// LoadPartitioner loads the partitioner module at path. A failing call
// (trap, timeout, memory limit, bad partition, error code) returns the
// module's error; the fallback is the caller's (core/extension in the
// broker).
func LoadPartitioner(ctx context.Context, path string, o Options) (*Partitioner, error) {
	m, err := Load(ctx, path, KindPartitioner, o)
	if err != nil {
		return nil, err
	}
	return &Partitioner{m: m}, nil
}

// Module returns the underlying module (Reload, Watch, Info, Close).
func (p *Partitioner) Module() *Module { return p.m }

// Close closes the module.
func (p *Partitioner) Close(ctx context.Context) error { return p.m.Close(ctx) }

// PartitionBatch implements partitioner.BatchPartitioner.
func (p *Partitioner) PartitionBatch(records []partitioner.Record, numPartitions int32, out []int32) error {
	return p.PartitionBatchContext(context.Background(), records, numPartitions, out)
}

// PartitionBatchContext is PartitionBatch under ctx, which bounds the wait
// for an instance and, with a CallTimeout, the call.
func (p *Partitioner) PartitionBatchContext(ctx context.Context, records []partitioner.Record, numPartitions int32, out []int32) error {
	if err := partitioner.CheckBatch(records, numPartitions, out); err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	if err := p.run(ctx, records, numPartitions, out); err != nil {
		return fmt.Errorf("hooks: partitioner %s: %w", p.m.path, err)
	}
	return nil
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
