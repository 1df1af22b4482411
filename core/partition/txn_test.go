package partition

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/record"
)

func transactional() batchOpt { return func(s *record.BatchSpec) { s.Transactional = true } }

func mustAppend(t *testing.T, p *Partition, b []byte) AppendResult {
	t.Helper()
	res, err := p.Append(b)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return res
}

func mustMarker(t *testing.T, p *Partition, m TxnMarker) int64 {
	t.Helper()
	off, err := p.WriteTxnMarker(m)
	if err != nil {
		t.Fatalf("WriteTxnMarker(%+v): %v", m, err)
	}
	return off
}

// TestLastStableOffsetAndAbortedTxns interleaves two transactional producers
// and a plain one: the LSO stays at the first open transaction, markers move
// it, and read_committed reads stop there and list the aborted transactions.
func TestLastStableOffsetAndAbortedTxns(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	lso := func() int64 { return p.Offsets().LastStableOffset }

	mustAppend(t, p, batch(t, 2))                                            // 0-1 plain
	a1 := mustAppend(t, p, batch(t, 3, producer(10, 0, 0), transactional())) // 2-4 txn A
	if got := lso(); got != a1.BaseOffset {
		t.Fatalf("LSO = %d, want %d (first offset of A)", got, a1.BaseOffset)
	}
	mustAppend(t, p, batch(t, 2, producer(11, 0, 0), transactional())) // 5-6 txn B
	mustAppend(t, p, batch(t, 1, producer(10, 0, 3), transactional())) // 7 txn A
	// A plain batch from a producer inside a transaction is refused.
	if _, err := p.Append(batch(t, 1, producer(10, 0, 4))); !errors.Is(err, ErrInvalidTxnState) {
		t.Fatalf("non-transactional batch inside a transaction: %v", err)
	}
	res, err := p.ReadCommitted(0, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	if n := countBatches(res.Records); n != 1 {
		t.Fatalf("read_committed before any marker returned %d batches, want the plain one", n)
	}
	abortAt := mustMarker(t, p, TxnMarker{ProducerID: 10, ProducerEpoch: 0, CoordinatorEpoch: 1}) // 8
	if got := lso(); got != 5 {
		t.Fatalf("LSO after A's abort = %d, want 5 (B still open)", got)
	}
	commitAt := mustMarker(t, p, TxnMarker{ProducerID: 11, ProducerEpoch: 0, Commit: true, CoordinatorEpoch: 1}) // 9
	if got, hw := lso(), p.Offsets().HighWatermark; got != hw || hw != commitAt+1 {
		t.Fatalf("LSO = %d, HW = %d, want both %d", got, hw, commitAt+1)
	}
	res, err = p.ReadCommitted(0, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []log.AbortedTxn{{ProducerID: 10, FirstOffset: 2, LastOffset: abortAt, LastStableOffset: 5}}
	if !reflect.DeepEqual(res.Aborted, want) {
		t.Fatalf("aborted = %+v, want %+v", res.Aborted, want)
	}
	if res, _ = p.ReadCommitted(abortAt+1, 1<<20, true); len(res.Aborted) != 0 {
		t.Fatalf("a read after the abort marker lists %v", res.Aborted)
	}
	// Control records carry Kafka's key and value.
	var types []int16
	for it := record.Batches(res.Records); it.Next(); {
		if it.Header().IsControl() {
			typ, ok := ControlType(it.Batch())
			if !ok {
				t.Fatal("unreadable control record")
			}
			types = append(types, typ)
		}
	}
	if !reflect.DeepEqual(types, []int16{ControlCommit}) {
		t.Fatalf("control types after the abort %v", types)
	}

	// Fencing: an older producer epoch or coordinator epoch is refused.
	if _, err := p.WriteTxnMarker(TxnMarker{ProducerID: 10, ProducerEpoch: -1, CoordinatorEpoch: 1}); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("old producer epoch: %v", err)
	}
	if _, err := p.WriteTxnMarker(TxnMarker{ProducerID: 10, ProducerEpoch: 0, CoordinatorEpoch: 0}); !errors.Is(err, ErrCoordinatorFenced) {
		t.Fatalf("old coordinator epoch: %v", err)
	}
	infos := p.Producers()
	if len(infos) != 2 || infos[0].ProducerID != 10 || infos[0].CurrentTxnStartOffset != -1 || infos[0].CoordinatorEpoch != 1 {
		t.Fatalf("producers %+v", infos)
	}
}

// TestOpenTxnSurvivesRestart checks that an open transaction is in the
// producer snapshot (current_txn_first_offset) and in a replay after a crash,
// and that an abort index entry lost with the crash is rebuilt.
func TestOpenTxnSurvivesRestart(t *testing.T) {
	for _, clean := range []bool{true, false} {
		name := map[bool]string{true: "clean", false: "replay"}[clean]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p, d := openPartition(t, dir, testConfig())
			mustAppend(t, p, batch(t, 2, producer(20, 1, 0), transactional()))                            // 0-1
			mustAppend(t, p, batch(t, 1, producer(21, 1, 0), transactional()))                            // 2
			abortAt := mustMarker(t, p, TxnMarker{ProducerID: 21, ProducerEpoch: 1, CoordinatorEpoch: 4}) // 3
			if clean {
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
			}
			logDir := p.Log().Path()
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if !clean {
				// No snapshot, and the index entry lost, as after a crash
				// before either reached the disk.
				files, _ := filepath.Glob(filepath.Join(logDir, "*.txnindex"))
				if len(files) != 1 {
					t.Fatalf("txn index files %v", files)
				}
				if err := os.Remove(files[0]); err != nil {
					t.Fatal(err)
				}
			}
			p, d = openPartition(t, dir, testConfig())
			defer d.Close()
			if got := p.Offsets().LastStableOffset; got != 0 {
				t.Fatalf("LSO after restart = %d, want 0", got)
			}
			if !p.OpenTxn(20, 1) || p.OpenTxn(21, 1) {
				t.Fatalf("open transactions after restart: 20=%v 21=%v", p.OpenTxn(20, 1), p.OpenTxn(21, 1))
			}
			mustMarker(t, p, TxnMarker{ProducerID: 20, ProducerEpoch: 1, Commit: true, CoordinatorEpoch: 4})
			res, err := p.ReadCommitted(0, 1<<20, true)
			if err != nil {
				t.Fatal(err)
			}
			want := []log.AbortedTxn{{ProducerID: 21, FirstOffset: 2, LastOffset: abortAt, LastStableOffset: 0}}
			if !reflect.DeepEqual(res.Aborted, want) {
				t.Fatalf("aborted after restart %+v, want %+v", res.Aborted, want)
			}
		})
	}
}

func countBatches(b []byte) int {
	n := 0
	for it := record.Batches(b); it.Next(); {
		n++
	}
	return n
}

// TestOpenTxnIsPerEpoch checks that a transaction left open here by epoch 1
// (its marker not written yet) is not taken for the transaction of epoch 2:
// the produce path verifies a batch of epoch 2 with the coordinator instead
// of appending it into epoch 1's transaction, where epoch 1's marker would
// commit or abort it.
func TestOpenTxnIsPerEpoch(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	mustAppend(t, p, batch(t, 2, producer(30, 1, 0), transactional()))
	if !p.OpenTxn(30, 1) {
		t.Fatal("epoch 1's transaction not open")
	}
	if p.OpenTxn(30, 2) {
		t.Fatal("epoch 2 reported inside epoch 1's open transaction")
	}
	if p.OpenTxn(31, 1) {
		t.Fatal("producer 31 reported with an open transaction")
	}
	mustMarker(t, p, TxnMarker{ProducerID: 30, ProducerEpoch: 2, Commit: true, CoordinatorEpoch: 1})
	if p.OpenTxn(30, 1) || p.OpenTxn(30, 2) {
		t.Fatal("transaction open after its marker")
	}
}

// TestEpochBumpedByMarkerStartsAtSequenceZero: a transaction version 2
// marker bumps the producer's epoch, so the producer's next batch here must
// start at sequence 0, as after any other epoch bump (Kafka's lastSeq of an
// entry without batches is NO_SEQUENCE). A later batch of the new epoch that
// arrives first, because the first was refused (NOT_ENOUGH_REPLICAS) while
// both were in flight, is out of order, not the start of the epoch; taken as
// the start, it made the retried first batch out of order and failed the
// producer (franz-go's TestTxnEtl on three nodes).
func TestEpochBumpedByMarkerStartsAtSequenceZero(t *testing.T) {
	for _, restart := range []string{"", "clean", "unclean"} {
		t.Run("restart="+restart, func(t *testing.T) {
			dir := t.TempDir()
			p, d := openPartition(t, dir, testConfig())
			mustAppend(t, p, batch(t, 3, producer(40, 0, 0), transactional()))
			mustMarker(t, p, TxnMarker{ProducerID: 40, ProducerEpoch: 1, Commit: true, CoordinatorEpoch: 1})
			switch restart {
			case "clean":
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
				p, d = openPartition(t, dir, testConfig())
			case "unclean":
				if err := p.Sync(); err != nil {
					t.Fatal(err)
				}
				offs, err := listSnapshots(vfs.Default, filepath.Join(dir, "t-0"))
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range offs {
					os.Remove(filepath.Join(dir, "t-0", snapshotName(f)))
				}
				p, d = openPartition(t, dir, testConfig())
			}
			defer d.Close()
			leo := p.Log().LogEndOffset()
			if _, err := p.Append(batch(t, 2, producer(40, 1, 3), transactional())); !errors.Is(err, ErrOutOfOrderSequence) {
				t.Fatalf("epoch 1 starting at sequence 3 after the marker's bump: %v, want ErrOutOfOrderSequence", err)
			}
			if got := p.Log().LogEndOffset(); got != leo {
				t.Fatalf("log end offset %d after a refused batch, want %d", got, leo)
			}
			mustAppend(t, p, batch(t, 3, producer(40, 1, 0), transactional()))
			mustAppend(t, p, batch(t, 2, producer(40, 1, 3), transactional()))
		})
	}
}
