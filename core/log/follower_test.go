package log

import (
	"errors"
	"testing"

	"github.com/gregorbroker/gregor/core/record"
)

func replicatedBatch(t *testing.T, base int64, epoch int32, n int) []byte {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: []byte("v")}
	}
	b, err := record.Encode(record.BatchSpec{BaseOffset: base, PartitionLeaderEpoch: epoch, ProducerID: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendReplicated(t *testing.T) {
	tests := []struct {
		name      string
		batches   [][3]int64 // base, epoch, records
		wantErr   error
		wantLEO   int64
		wantEpoch [2]int64 // epoch asked, end offset expected
	}{
		{"contiguous", [][3]int64{{0, 1, 3}, {3, 1, 2}}, nil, 5, [2]int64{1, 5}},
		{"gap kept from a compacted leader", [][3]int64{{0, 1, 2}, {7, 1, 1}}, nil, 8, [2]int64{1, 8}},
		{"new epoch starts at the batch", [][3]int64{{0, 1, 2}, {5, 3, 1}}, nil, 6, [2]int64{1, 5}},
		{"backwards is refused", [][3]int64{{0, 1, 4}, {2, 1, 1}}, ErrOffsetOrder, 4, [2]int64{1, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newEnv(t, DefaultConfig()).log("t", 0)
			var err error
			for _, b := range tt.batches {
				if err = l.AppendReplicated(replicatedBatch(t, b[0], int32(b[1]), int(b[2]))); err != nil {
					break
				}
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if leo := l.LogEndOffset(); leo != tt.wantLEO {
				t.Fatalf("log end %d, want %d", leo, tt.wantLEO)
			}
			if _, end := l.EndOffsetForEpoch(int32(tt.wantEpoch[0])); end != tt.wantEpoch[1] {
				t.Fatalf("end of epoch %d is %d, want %d", tt.wantEpoch[0], end, tt.wantEpoch[1])
			}
		})
	}
}

func TestAppendReplicatedRefusesCorruptFraming(t *testing.T) {
	l := newEnv(t, DefaultConfig()).log("t", 0)
	b := replicatedBatch(t, 0, 1, 2)
	if err := l.AppendReplicated(b[:len(b)-1]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short batch: %v, want ErrCorrupt", err)
	}
}

func TestResetTo(t *testing.T) {
	l := newEnv(t, DefaultConfig()).log("t", 0)
	if err := l.AppendReplicated(replicatedBatch(t, 0, 1, 3)); err != nil {
		t.Fatal(err)
	}
	if err := l.ResetTo(100); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 100 || l.LogEndOffset() != 100 {
		t.Fatalf("start %d end %d, want 100 100", l.LogStartOffset(), l.LogEndOffset())
	}
	if err := l.AppendReplicated(replicatedBatch(t, 100, 2, 1)); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 101 {
		t.Fatalf("end %d, want 101", l.LogEndOffset())
	}
}
