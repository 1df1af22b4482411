package partition

import (
	"errors"
	"testing"
)

// A coordinator's transactional offset commit carries the producer's id and
// epoch but no sequence. After a marker at epoch 1 (the partition knows the
// producer at epoch 1), InitProducerId of a restarted producer moves it to
// epoch 2: its first TxnOffsetCommit batch, at epoch 2 with sequence -1,
// must be appended, and only an older epoch is fenced. A client's batch
// with a producer id and no sequence is INVALID_RECORD, as in Kafka.
func TestAppendCoordinatorChecksOnlyTheEpoch(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	noSeq := func(epoch int16) []byte { return batch(t, 1, producer(7, epoch, -1), transactional()) }
	if _, err := p.AppendCoordinator(noSeq(0)); err != nil {
		t.Fatalf("first commit: %v", err)
	}
	mustMarker(t, p, TxnMarker{ProducerID: 7, ProducerEpoch: 1, Commit: true})
	steps := []struct {
		name   string
		append func([]byte) (AppendResult, error)
		batch  []byte
		want   error
	}{
		{"restarted producer's first commit, new epoch", p.AppendCoordinator, noSeq(2), nil},
		{"same epoch again", p.AppendCoordinator, noSeq(2), nil},
		{"fenced older epoch", p.AppendCoordinator, noSeq(1), ErrInvalidProducerEpoch},
		{"a client's batch without a sequence", p.Append, batch(t, 1, producer(8, 0, -1), transactional()), ErrInvalidRecord},
		{"a client's new epoch must start at 0", p.Append, batch(t, 1, producer(7, 3, 5), transactional()), ErrOutOfOrderSequence},
	}
	for _, s := range steps {
		if _, err := s.append(s.batch); !errors.Is(err, s.want) {
			t.Fatalf("%s: err = %v, want %v", s.name, err, s.want)
		}
	}
	if leo := p.Offsets().LogEndOffset; leo != 4 {
		t.Fatalf("log end offset %d, want 4 (two commits, the marker, one more commit)", leo)
	}
}
