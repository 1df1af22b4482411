package plugins

import (
	"context"
	"fmt"

	"github.com/gregorbroker/gregor/sdk"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
)

// configureRequest is the Configure call every kind starts with.
func configureRequest(cfg Config) *pb.ConfigureRequest {
	return &pb.ConfigureRequest{Name: cfg.Name, ConfigJson: cfg.ConfigJSON, ContractVersion: sdk.ContractVersion}
}

// extension is what every adapter shares: the supervised process.
type extension struct {
	proc *process
}

// Name is the extension's name in broker.toml.
func (e *extension) Name() string { return e.proc.cfg.Name }

// WaitReady waits until the plugin process is up, starting a restart whose
// backoff has passed. It returns ErrUnavailable at once when the last
// restart failed and the next is not due.
func (e *extension) WaitReady(ctx context.Context) error { return e.proc.waitReady(ctx) }

// Close stops the plugin process.
func (e *extension) Close() error {
	e.proc.close()
	return nil
}

// Partitioner is a partitioner.BatchPartitioner served by a plugin process.
// It is safe for concurrent use.
type Partitioner struct {
	extension
}

var _ partitioner.BatchPartitioner = (*Partitioner)(nil)

// OpenPartitioner starts a partitioner plugin. A failing call returns its
// error; the fallback is the caller's (core/extension in the broker).
func OpenPartitioner(cfg Config) (*Partitioner, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(sdkplugin.KindPartitioner); err != nil {
		return nil, err
	}
	proc, err := startProcess(cfg, func(ctx context.Context, raw any) error {
		_, err := raw.(pb.PartitionerClient).Configure(ctx, configureRequest(cfg))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Partitioner{extension: extension{proc: proc}}, nil
}

// PartitionBatch implements partitioner.BatchPartitioner with one call to
// the plugin for the whole batch.
func (p *Partitioner) PartitionBatch(records []partitioner.Record, numPartitions int32, out []int32) error {
	return p.PartitionBatchContext(context.Background(), records, numPartitions, out)
}

// PartitionBatchContext is PartitionBatch under ctx, whose deadline, when
// it comes before the call timeout, bounds the call.
func (p *Partitioner) PartitionBatchContext(ctx context.Context, records []partitioner.Record, numPartitions int32, out []int32) error {
	if err := partitioner.CheckBatch(records, numPartitions, out); err != nil {
		return err
	}
	if len(records) == 0 {
		return nil
	}
	return p.proc.call(ctx, "partition", func(ctx context.Context, raw any) error {
		resp, err := raw.(pb.PartitionerClient).PartitionBatch(ctx, &pb.PartitionBatchRequest{
			NumPartitions: numPartitions,
			Records:       sdkplugin.RecordsToProto(records),
		})
		if err != nil {
			return err
		}
		parts := resp.GetPartitions()
		if len(parts) != len(records) {
			return fmt.Errorf("%w: %d partitions for %d records", ErrExtension, len(parts), len(records))
		}
		for i, part := range parts {
			if err := partitioner.CheckPartition(part, numPartitions); err != nil {
				return fmt.Errorf("%w: record %d: %w", ErrExtension, i, err)
			}
		}
		copy(out, parts)
		return nil
	})
}
