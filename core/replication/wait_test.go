package replication

import (
	"context"
	"errors"
	"testing"

	"github.com/gregorbroker/gregor/core/partition"
)

func TestWaitReplicated(t *testing.T) {
	tests := []struct {
		name string
		// after runs while the producer waits.
		after func(p *partition.Partition)
		// timeout ends the wait after after ran.
		timeout bool
		wantErr error
	}{
		{"both followers fetch past the batch", func(p *partition.Partition) {
			p.UpdateFollower(2, 3)
			p.UpdateFollower(3, 3)
		}, false, nil},
		// Kafka's strict min ISR: below min.insync.replicas the high
		// watermark stays, so the batch is never committed and the
		// producer times out, even once the former members have it.
		{"ISR shrinks below min.insync.replicas", func(p *partition.Partition) {
			p.SetLeadershipEpochs(1, 1, 1, []int32{1, 2, 3}, []int32{1})
			p.UpdateFollower(2, 3)
			p.UpdateFollower(3, 3)
		}, true, ErrTimeout},
		{"leadership moves away", func(p *partition.Partition) {
			p.SetLeadershipEpochs(2, 2, 1, []int32{1, 2, 3}, []int32{2, 3})
		}, false, partition.ErrNotLeader},
		{"nothing happens until the timeout", nil, true, ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: t0}
			p := openPartition(t, 1, c)
			p.SetLeadershipEpochs(1, 1, 0, []int32{1, 2, 3}, []int32{1, 2, 3})
			res, err := p.Append(testBatch(t, 3))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got := make(chan error, 1)
			go func() { got <- WaitReplicated(ctx, p, res.LastOffset+1) }()
			select {
			case err := <-got:
				t.Fatalf("returned %v before anything happened", err)
			default:
			}
			if tt.after != nil {
				tt.after(p)
			}
			if tt.timeout {
				select {
				case err := <-got:
					t.Fatalf("returned %v before the timeout", err)
				default:
				}
				cancel()
			}
			if err := <-got; !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
		})
	}
}
