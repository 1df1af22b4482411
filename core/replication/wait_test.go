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
		after   func(p *partition.Partition)
		wantErr error
	}{
		{"both followers fetch past the batch", func(p *partition.Partition) {
			p.UpdateFollower(2, 3)
			p.UpdateFollower(3, 3)
		}, nil},
		{"ISR shrinks below min.insync.replicas", func(p *partition.Partition) {
			p.SetLeadershipEpochs(1, 1, 1, []int32{1, 2, 3}, []int32{1})
		}, partition.ErrNotEnoughReplicasAfterAppend},
		{"leadership moves away", func(p *partition.Partition) {
			p.SetLeadershipEpochs(2, 2, 1, []int32{1, 2, 3}, []int32{2, 3})
		}, partition.ErrNotLeader},
		{"nothing happens until the timeout", nil, ErrTimeout},
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
			} else {
				cancel()
			}
			if err := <-got; !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
		})
	}
}
