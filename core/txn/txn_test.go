package txn

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// clock is the injected clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is a coordinator over one real __transaction_state partition and
// real data partitions, with markers written straight to them.
type env struct {
	t      *testing.T
	dir    string
	clock  *clock
	logs   *log.Dir
	log0   *partition.Partition
	data   map[TopicPartition]*partition.Partition
	c      *Coordinator
	nextID int64

	mu        sync.Mutex // guards failWrite
	failWrite bool
}

func newEnv(t *testing.T, dir string, clk *clock) *env {
	t.Helper()
	e := newStoppedEnv(t, dir, clk)
	e.start()
	return e
}

// newStoppedEnv is newEnv without the coordinator started, so a test can
// make marker writes fail before it loads.
func newStoppedEnv(t *testing.T, dir string, clk *clock) *env {
	t.Helper()
	e := &env{t: t, dir: dir, clock: clk, data: map[TopicPartition]*partition.Partition{}, nextID: 1000}
	opts := log.Options{Now: clk.Now, Logger: quiet}
	d, err := log.OpenDir(dir, opts, func(string, int32) log.Config { return log.DefaultConfig() })
	if err != nil {
		t.Fatal(err)
	}
	e.logs = d
	e.log0 = e.open(StateTopic, 0)
	for i := int32(0); i < 2; i++ {
		e.data[TopicPartition{"data", i}] = e.open("data", i)
	}
	t.Cleanup(e.close)
	return e
}

func (e *env) open(topic string, idx int32) *partition.Partition {
	e.t.Helper()
	cfg := partition.Config{Log: log.DefaultConfig(), MaxMessageBytes: 1 << 20, TimestampBeforeMaxMs: -1, TimestampAfterMaxMs: -1}
	l, err := e.logs.Create(topic, idx, cfg.Log)
	if err != nil {
		e.t.Fatal(err)
	}
	p, err := partition.New(l, [16]byte{byte(idx + 1)}, cfg, partition.Options{Now: e.clock.Now, Logger: quiet})
	if err != nil {
		e.t.Fatal(err)
	}
	p.SetLeadership(1, 5, []int32{1}, []int32{1})
	return p
}

func (e *env) start() {
	e.c = New(Config{MaxTimeout: time.Minute, AbortCheckInterval: time.Second}, Options{
		Now: e.clock.Now, Logger: quiet,
		AllocateProducerID: func() (int64, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.nextID++
			return e.nextID, nil
		},
		WriteMarker: func(tp TopicPartition, m partition.TxnMarker) error {
			e.mu.Lock()
			fail := e.failWrite
			e.mu.Unlock()
			if fail {
				return errors.New("partition unavailable")
			}
			p, ok := e.data[tp]
			if !ok {
				return ErrMarkerDropped
			}
			_, err := p.WriteTxnMarker(m)
			return err
		},
	})
	// One partition: every transactional id maps to it.
	e.c.Assign(1, map[int32]Leader{0: {Partition: e.log0, Epoch: 5}})
	if err := e.c.WaitLoaded(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) close() {
	if e.logs == nil {
		return
	}
	e.c.Close()
	e.log0.Close()
	for _, p := range e.data {
		p.Close()
	}
	e.logs.Close()
	e.logs = nil
}

func (e *env) setFail(v bool) {
	e.mu.Lock()
	e.failWrite = v
	e.mu.Unlock()
}

// produce appends a transactional batch for the producer.
func (e *env) produce(tp TopicPartition, pe ProducerIDAndEpoch, seq int32) error {
	b, err := record.Encode(record.BatchSpec{Transactional: true, FirstTimestamp: e.clock.Now().UnixMilli(),
		ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, BaseSequence: seq},
		[]record.Record{{Value: []byte("v")}})
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = e.data[tp].Append(b)
	return err
}

func (e *env) init(id string) ProducerIDAndEpoch {
	e.t.Helper()
	pe, err := e.c.InitProducerID(InitRequest{TransactionalID: id, TimeoutMs: 10_000, ProducerID: -1, ProducerEpoch: -1})
	if err != nil {
		e.t.Fatalf("InitProducerID(%s): %v", id, err)
	}
	return pe
}

func (e *env) add(id string, pe ProducerIDAndEpoch, tps ...TopicPartition) error {
	return e.c.AddPartitions(AddPartitionsRequest{TransactionalID: id, ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Partitions: tps})
}

func (e *env) describe(id string) Description {
	e.t.Helper()
	d, err := e.c.Describe(id)
	if err != nil {
		e.t.Fatalf("Describe(%s): %v", id, err)
	}
	return d
}

var (
	tp0 = TopicPartition{"data", 0}
	tp1 = TopicPartition{"data", 1}
)

func newClock() *clock { return &clock{now: time.UnixMilli(1_800_000_000_000)} }

func TestCommitAndAbortWriteMarkers(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(map[bool]string{true: "commit", false: "abort"}[commit], func(t *testing.T) {
			e := newEnv(t, t.TempDir(), newClock())
			pe := e.init("app")
			if err := e.add("app", pe, tp0, tp1); err != nil {
				t.Fatal(err)
			}
			if d := e.describe("app"); d.State != StateOngoing || len(d.Partitions) != 2 || d.StartMs < 0 {
				t.Fatalf("after AddPartitions: %+v", d)
			}
			for _, tp := range []TopicPartition{tp0, tp1} {
				if err := e.produce(tp, pe, 0); err != nil {
					t.Fatal(err)
				}
				if lso := e.data[tp].Offsets().LastStableOffset; lso != 0 {
					t.Fatalf("LSO of %v = %d while open", tp, lso)
				}
			}
			got, err := e.c.EndTxn(EndRequest{TransactionalID: "app", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Commit: commit})
			if err != nil || got != pe {
				t.Fatalf("EndTxn = %v, %v", got, err)
			}
			want := StateCompleteAbort
			if commit {
				want = StateCompleteCommit
			}
			if d := e.describe("app"); d.State != want || len(d.Partitions) != 0 {
				t.Fatalf("after EndTxn: %+v", d)
			}
			for _, tp := range []TopicPartition{tp0, tp1} {
				off := e.data[tp].Offsets()
				if off.LastStableOffset != 2 || off.HighWatermark != 2 {
					t.Fatalf("%v after EndTxn: %+v", tp, off)
				}
				res, _ := e.data[tp].ReadCommitted(0, 1<<20, true)
				if commit != (len(res.Aborted) == 0) {
					t.Fatalf("%v aborted list %v", tp, res.Aborted)
				}
			}
			// A retried EndTxn with the same outcome succeeds; the other
			// outcome is refused.
			if _, err := e.c.EndTxn(EndRequest{TransactionalID: "app", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Commit: commit}); err != nil {
				t.Fatalf("retried EndTxn: %v", err)
			}
			if _, err := e.c.EndTxn(EndRequest{TransactionalID: "app", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Commit: !commit}); !errors.Is(err, ErrInvalidTxnState) {
				t.Fatalf("opposite EndTxn: %v", err)
			}
		})
	}
}

func TestRequestValidation(t *testing.T) {
	e := newEnv(t, t.TempDir(), newClock())
	pe := e.init("v")
	for _, tc := range []struct {
		name string
		err  error
		do   func() error
	}{
		{"timeout above max", ErrInvalidTimeout, func() error {
			_, err := e.c.InitProducerID(InitRequest{TransactionalID: "x", TimeoutMs: 3_600_000, ProducerID: -1, ProducerEpoch: -1})
			return err
		}},
		{"zero timeout", ErrInvalidTimeout, func() error {
			_, err := e.c.InitProducerID(InitRequest{TransactionalID: "x", TimeoutMs: 0, ProducerID: -1, ProducerEpoch: -1})
			return err
		}},
		{"unknown id", ErrInvalidProducerIDMapping, func() error {
			return e.add("nope", pe, tp0)
		}},
		{"wrong producer id", ErrInvalidProducerIDMapping, func() error {
			return e.add("v", ProducerIDAndEpoch{pe.ProducerID + 1, pe.Epoch}, tp0)
		}},
		{"wrong epoch", ErrProducerFenced, func() error {
			return e.add("v", ProducerIDAndEpoch{pe.ProducerID, pe.Epoch + 1}, tp0)
		}},
		{"end with nothing open", ErrInvalidTxnState, func() error {
			_, err := e.c.EndTxn(EndRequest{TransactionalID: "v", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Commit: true})
			return err
		}},
		{"describe unknown", ErrTransactionalIDNotFound, func() error {
			_, err := e.c.Describe("nope")
			return err
		}},
		{"KIP-360 with a stale epoch", ErrProducerFenced, func() error {
			_, err := e.c.InitProducerID(InitRequest{TransactionalID: "v", TimeoutMs: 1000, ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch + 7})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.do(); !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
		})
	}
}

// TestZombieFenced: a second InitProducerID for the same id aborts the
// first instance's open transaction with a bumped epoch; the first instance
// can neither continue its transaction nor write to the partition.
func TestZombieFenced(t *testing.T) {
	e := newEnv(t, t.TempDir(), newClock())
	old := e.init("z")
	if err := e.add("z", old, tp0); err != nil {
		t.Fatal(err)
	}
	if err := e.produce(tp0, old, 0); err != nil {
		t.Fatal(err)
	}
	fresh := e.init("z")
	if fresh.ProducerID != old.ProducerID || fresh.Epoch != old.Epoch+2 {
		t.Fatalf("new instance got %+v after %+v; want the same id, epoch+2 (one bump fences, one is the new session)", fresh, old)
	}
	if d := e.describe("z"); d.State != StateEmpty {
		t.Fatalf("state %v", d.State)
	}
	res, _ := e.data[tp0].ReadCommitted(0, 1<<20, true)
	if len(res.Aborted) != 1 || e.data[tp0].Offsets().LastStableOffset != 2 {
		t.Fatalf("the zombie's transaction was not aborted: %+v %+v", res.Aborted, e.data[tp0].Offsets())
	}
	if err := e.add("z", old, tp1); !errors.Is(err, ErrProducerFenced) {
		t.Fatalf("zombie AddPartitions: %v", err)
	}
	if _, err := e.c.EndTxn(EndRequest{TransactionalID: "z", ProducerID: old.ProducerID, ProducerEpoch: old.Epoch, Commit: true}); !errors.Is(err, ErrProducerFenced) {
		t.Fatalf("zombie EndTxn: %v", err)
	}
	if err := e.produce(tp0, old, 1); !errors.Is(err, partition.ErrInvalidProducerEpoch) {
		t.Fatalf("zombie produce: %v", err)
	}
	// KIP-360: the current instance may bump its own epoch.
	again, err := e.c.InitProducerID(InitRequest{TransactionalID: "z", TimeoutMs: 1000, ProducerID: fresh.ProducerID, ProducerEpoch: fresh.Epoch})
	if err != nil || again.Epoch != fresh.Epoch+1 {
		t.Fatalf("KIP-360 bump = %+v, %v", again, err)
	}
	// Its retry (answer lost) gets the same answer without a second bump.
	retry, err := e.c.InitProducerID(InitRequest{TransactionalID: "z", TimeoutMs: 1000, ProducerID: fresh.ProducerID, ProducerEpoch: fresh.Epoch})
	if err != nil || retry != again {
		t.Fatalf("KIP-360 retry = %+v, %v; want %+v", retry, err, again)
	}
}

// TestHangingTransactionAborted: a transaction left open past its timeout
// is aborted when the check runs, the LSO moves on, and the producer is
// fenced.
func TestHangingTransactionAborted(t *testing.T) {
	clk := newClock()
	e := newEnv(t, t.TempDir(), clk)
	pe := e.init("h")
	if err := e.add("h", pe, tp0); err != nil {
		t.Fatal(err)
	}
	if err := e.produce(tp0, pe, 0); err != nil {
		t.Fatal(err)
	}
	clk.Advance(9 * time.Second)
	e.c.AbortTimedOut()
	if d := e.describe("h"); d.State != StateOngoing {
		t.Fatalf("aborted before the timeout: %v", d.State)
	}
	open, _ := e.c.List(ListFilter{MinDurationMs: 5000})
	if len(open) != 1 || open[0].TransactionalID != "h" {
		t.Fatalf("List(open 5s) = %+v", open)
	}
	clk.Advance(time.Second)
	e.c.AbortTimedOut()
	d := e.describe("h")
	if d.State != StateCompleteAbort || d.ProducerEpoch != pe.Epoch+1 {
		t.Fatalf("after the timeout: %+v", d)
	}
	if lso := e.data[tp0].Offsets().LastStableOffset; lso != 2 {
		t.Fatalf("LSO = %d after the abort", lso)
	}
	if _, err := e.c.EndTxn(EndRequest{TransactionalID: "h", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Commit: true}); !errors.Is(err, ErrProducerFenced) {
		t.Fatalf("late commit: %v", err)
	}
	if open, _ := e.c.List(ListFilter{States: []State{StateOngoing}, MinDurationMs: -1}); len(open) != 0 {
		t.Fatalf("still listed as ongoing: %+v", open)
	}
}

// TestPreparedTransactionRecovered: markers that could not be written stay
// owed across a restart of the coordinator, which writes them when it loads
// the partition.
func TestPreparedTransactionRecovered(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	e := newEnv(t, dir, clk)
	pe := e.init("r")
	if err := e.add("r", pe, tp0, tp1); err != nil {
		t.Fatal(err)
	}
	for _, tp := range []TopicPartition{tp0, tp1} {
		if err := e.produce(tp, pe, 0); err != nil {
			t.Fatal(err)
		}
	}
	e.setFail(true)
	if _, err := e.c.EndTxn(EndRequest{TransactionalID: "r", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Commit: true}); err != nil {
		t.Fatalf("EndTxn with markers failing: %v (the outcome is decided once prepared)", err)
	}
	if d := e.describe("r"); d.State != StatePrepareCommit {
		t.Fatalf("state %v", d.State)
	}
	if err := e.add("r", pe, tp0); !errors.Is(err, ErrConcurrentTransactions) {
		t.Fatalf("AddPartitions while completing: %v", err)
	}
	e.close()

	e2 := newEnv(t, dir, clk) // markers work again
	if d := e2.describe("r"); d.State != StateCompleteCommit {
		t.Fatalf("after recovery: %+v", d)
	}
	for _, tp := range []TopicPartition{tp0, tp1} {
		if off := e2.data[tp].Offsets(); off.LastStableOffset != 2 {
			t.Fatalf("%v after recovery %+v", tp, off)
		}
	}
	// The producer carries on in its epoch.
	if err := e2.add("r", pe, tp0); err != nil {
		t.Fatalf("next transaction: %v", err)
	}
}

// TestTransactionVersion2 covers KIP-890 part 2: each end bumps the epoch,
// retries get the same answer, and an empty abort is allowed.
func TestTransactionVersion2(t *testing.T) {
	e := newEnv(t, t.TempDir(), newClock())
	pe, err := e.c.InitProducerID(InitRequest{TransactionalID: "v2", TimeoutMs: 5000, ProducerID: -1, ProducerEpoch: -1, TransactionVersion: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.add("v2", pe, tp0); err != nil {
		t.Fatal(err)
	}
	if err := e.produce(tp0, pe, 0); err != nil {
		t.Fatal(err)
	}
	end := EndRequest{TransactionalID: "v2", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Commit: true, BumpEpoch: true}
	next, err := e.c.EndTxn(end)
	if err != nil || next != (ProducerIDAndEpoch{pe.ProducerID, pe.Epoch + 1}) {
		t.Fatalf("EndTxn v5 = %+v, %v", next, err)
	}
	if retry, err := e.c.EndTxn(end); err != nil || retry != next {
		t.Fatalf("retried EndTxn v5 = %+v, %v", retry, err)
	}
	// The marker carries the new epoch; the old epoch is fenced there.
	if err := e.produce(tp0, pe, 1); !errors.Is(err, partition.ErrInvalidProducerEpoch) {
		t.Fatalf("produce at the old epoch: %v", err)
	}
	empty, err := e.c.EndTxn(EndRequest{TransactionalID: "v2", ProducerID: next.ProducerID, ProducerEpoch: next.Epoch, BumpEpoch: true})
	if err != nil || empty.Epoch != next.Epoch+1 {
		t.Fatalf("empty abort = %+v, %v", empty, err)
	}
}

func TestRecordsAndPartitionFor(t *testing.T) {
	for _, tc := range []struct {
		id   string
		n    int32
		want int32
	}{
		{"hello", 50, 99162322 % 50},
		{"polygenelubricants", 50, 0}, // hashCode is Integer.MIN_VALUE
		{"", 50, 0},
		{"x", 0, -1},
	} {
		if got := PartitionFor(tc.id, tc.n); got != tc.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", tc.id, tc.n, got, tc.want)
		}
	}
	for _, tv := range []int16{0, 2} {
		m := &txnMeta{id: "id", producerID: 7, prevProducerID: -1, nextProducerID: -1, epoch: 3, lastEpoch: -1, timeoutMs: 900,
			state: StatePrepareCommit, partitions: map[TopicPartition]bool{tp0: true, {"other", 4}: true},
			startMs: 11, updateMs: 12, tv: tv}
		b := encodeValue(m)
		if want := int16(tv / 2); int16(b[0])<<8|int16(b[1]) != want {
			t.Fatalf("tv %d wrote value version %d", tv, b[1])
		}
		id, ok, err := decodeKey(encodeKey("id"))
		if err != nil || !ok || id != "id" {
			t.Fatalf("key round trip %q %v %v", id, ok, err)
		}
		got, err := decodeValue("id", b)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("value round trip:\n got %+v %v\nwant %+v", got, err, m)
		}
	}
	for _, bad := range [][]byte{nil, {0}, {0, 9, 1}, {0, 0, 1, 2, 3}} {
		if _, err := decodeValue("id", bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decodeValue(% x) = %v, want ErrCorrupt", bad, err)
		}
	}
	if _, _, err := decodeKey([]byte{0xff, 0xff}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("negative key version: %v", err)
	}
	if _, ok, err := decodeKey([]byte{0, 5, 1}); ok || err != nil {
		t.Errorf("unknown key version: ok=%v err=%v, want skipped", ok, err)
	}
}

func FuzzDecodeValue(f *testing.F) {
	f.Add(encodeValue(&txnMeta{id: "a", partitions: map[TopicPartition]bool{tp0: true}}))
	f.Add(encodeValue(&txnMeta{id: "a", tv: 2, partitions: map[TopicPartition]bool{}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := decodeValue("a", b)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error outside ErrCorrupt: %v", err)
		}
	})
}
