package share

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func batch(first, last int64) BatchInfo {
	return BatchInfo{FirstOffset: first, LastOffset: last, ProducerID: -1}
}

func newTestPartition(start int64) (*Partition, *fakeClock) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	return NewPartition(PartitionConfig{RecordLockDuration: 30 * time.Second, DeliveryCountLimit: 5, MaxRecordLocks: 200}, c.now, start), c
}

func TestAcquireDisjointAndWholeBatches(t *testing.T) {
	p, _ := newTestPartition(0)
	got := p.Acquire("a", []BatchInfo{batch(0, 4), batch(5, 9)}, AcquireOptions{MaxRecords: 3})
	want := []AcquiredRange{{0, 4, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("batch mode: got %v want %v", got, want)
	}
	// A second member reading from FetchOffset gets the rest, never 0-4.
	off, ok := p.FetchOffset()
	if off != 5 || !ok {
		t.Fatalf("fetch offset %d %v, want 5", off, ok)
	}
	got = p.Acquire("b", []BatchInfo{batch(0, 4), batch(5, 9)}, AcquireOptions{MaxRecords: 2, Strict: true})
	if want := []AcquiredRange{{5, 6, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("strict mode: got %v want %v", got, want)
	}
	if s, e := p.Offsets(); s != 0 || e != 7 {
		t.Fatalf("offsets [%d, %d), want [0, 7)", s, e)
	}
}

func TestAcknowledgeTransitions(t *testing.T) {
	tests := []struct {
		name      string
		ack       AckType
		wantState RecordState
		wantStart int64
	}{
		{"accept", AckAccept, Acknowledged, 3},
		{"reject", AckReject, Archived, 3},
		{"gap", AckGap, Archived, 3},
		{"release", AckRelease, Available, 0},
		{"renew", AckRenew, Acquired, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newTestPartition(0)
			p.Acquire("a", []BatchInfo{batch(0, 2)}, AcquireOptions{})
			if err := p.Acknowledge("a", 0, 2, []AckType{tt.ack}); err != nil {
				t.Fatal(err)
			}
			if st, _, ok := p.State(1); ok && st != tt.wantState {
				t.Fatalf("state %v, want %v", st, tt.wantState)
			}
			if s, _ := p.Offsets(); s != tt.wantStart {
				t.Fatalf("start %d, want %d", s, tt.wantStart)
			}
		})
	}
}

func TestAcknowledgeChecksOwnerAndState(t *testing.T) {
	p, _ := newTestPartition(0)
	p.Acquire("a", []BatchInfo{batch(0, 2)}, AcquireOptions{})
	for _, tc := range []struct {
		member      string
		first, last int64
		types       []AckType
		want        error
	}{
		{"b", 0, 2, []AckType{AckAccept}, ErrInvalidRecordState},
		{"a", 0, 5, []AckType{AckAccept}, ErrInvalidRecordState},
		{"a", 0, 2, []AckType{AckAccept, AckAccept}, ErrInvalidRequest},
		{"a", 0, 0, []AckType{9}, ErrInvalidRequest},
		{"a", 2, 1, []AckType{AckAccept}, ErrInvalidRequest},
	} {
		if err := p.Acknowledge(tc.member, tc.first, tc.last, tc.types); !errors.Is(err, tc.want) {
			t.Errorf("%s [%d,%d] %v: err %v, want %v", tc.member, tc.first, tc.last, tc.types, err, tc.want)
		}
	}
	// Nothing changed: per-offset types are applied as a whole.
	if err := p.Acknowledge("a", 0, 2, []AckType{AckAccept, AckReject, AckRelease}); err != nil {
		t.Fatal(err)
	}
	if err := p.Acknowledge("a", 0, 0, []AckType{AckAccept}); !errors.Is(err, ErrInvalidRecordState) {
		t.Fatalf("second accept of 0: %v", err)
	}
	if st, d, _ := p.State(2); st != Available || d != 1 {
		t.Fatalf("released record: %v delivery %d", st, d)
	}
	if s, e := p.Offsets(); s != 2 || e != 3 {
		t.Fatalf("offsets [%d, %d), want [2, 3)", s, e)
	}
}

func TestLockExpiryRedeliversWithCount(t *testing.T) {
	p, c := newTestPartition(0)
	p.Acquire("a", []BatchInfo{batch(0, 1)}, AcquireOptions{})
	c.advance(29 * time.Second)
	if got := p.Acquire("b", []BatchInfo{batch(0, 1)}, AcquireOptions{}); got != nil {
		t.Fatalf("acquired %v under a live lock", got)
	}
	if err := p.Acknowledge("a", 0, 0, []AckType{AckRenew}); err != nil {
		t.Fatal(err)
	}
	c.advance(2 * time.Second) // offset 1's lock expired, offset 0 was renewed
	got := p.Acquire("b", []BatchInfo{batch(0, 1)}, AcquireOptions{})
	if want := []AcquiredRange{{1, 1, 2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after expiry: got %v want %v", got, want)
	}
	if err := p.Acknowledge("a", 1, 1, []AckType{AckAccept}); !errors.Is(err, ErrInvalidRecordState) {
		t.Fatalf("ack by the expired holder: %v", err)
	}
	if st := p.Stats(); st.LockTimeouts != 1 || st.Acquired != 2 {
		t.Fatalf("stats %+v", st)
	}
	if d, ok := p.NextLockDeadline(); !ok || !d.Equal(c.t.Add(28*time.Second)) {
		t.Fatalf("next deadline %v %v", d, ok)
	}
}

func TestDeliveryLimitArchives(t *testing.T) {
	p, c := newTestPartition(0)
	for i := 1; i <= 5; i++ {
		got := p.Acquire("a", []BatchInfo{batch(0, 0)}, AcquireOptions{})
		if len(got) != 1 || got[0].DeliveryCount != int16(i) {
			t.Fatalf("delivery %d: %v", i, got)
		}
		if i%2 == 0 {
			c.advance(31 * time.Second)
		} else if err := p.Acknowledge("a", 0, 0, []AckType{AckRelease}); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.Acquire("a", []BatchInfo{batch(0, 0)}, AcquireOptions{}); got != nil {
		t.Fatalf("sixth delivery %v", got)
	}
	if s, _ := p.Offsets(); s != 1 {
		t.Fatalf("start %d after archive, want 1", s)
	}
	if st := p.Stats(); st.Archived != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestReadCommittedAndControlArchived(t *testing.T) {
	p, _ := newTestPartition(0)
	bs := []BatchInfo{
		{FirstOffset: 0, LastOffset: 1, ProducerID: 7, Transactional: true},
		{FirstOffset: 2, LastOffset: 2, ProducerID: 7, Transactional: true, Control: true},
		{FirstOffset: 3, LastOffset: 4, ProducerID: 8, Transactional: true},
		{FirstOffset: 5, LastOffset: 5, ProducerID: 8, Transactional: true, Control: true},
	}
	got := p.Acquire("a", bs, AcquireOptions{ReadCommitted: true, Aborted: []AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 2}}})
	if want := []AcquiredRange{{3, 4, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read_committed: got %v want %v", got, want)
	}
	if s, e := p.Offsets(); s != 3 || e != 6 {
		t.Fatalf("offsets [%d, %d), want [3, 6)", s, e)
	}
	q, _ := newTestPartition(0)
	got = q.Acquire("a", bs, AcquireOptions{Aborted: []AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 2}}})
	if want := []AcquiredRange{{0, 1, 1}, {3, 4, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read_uncommitted: got %v want %v", got, want)
	}
}

func TestMaxRecordLocksBoundsWindow(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := NewPartition(PartitionConfig{MaxRecordLocks: 3}, c.now, 10)
	got := p.Acquire("a", []BatchInfo{batch(10, 14)}, AcquireOptions{})
	if want := []AcquiredRange{{10, 12, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if _, ok := p.FetchOffset(); ok {
		t.Fatal("window full, yet FetchOffset says acquirable")
	}
	if err := p.Acknowledge("a", 10, 10, []AckType{AckAccept}); err != nil {
		t.Fatal(err)
	}
	if off, ok := p.FetchOffset(); !ok || off != 13 {
		t.Fatalf("fetch offset %d %v, want 13", off, ok)
	}
}

func TestSnapshotRestoreAndReleaseMember(t *testing.T) {
	p, c := newTestPartition(0)
	p.Acquire("a", []BatchInfo{batch(0, 5)}, AcquireOptions{})
	if err := p.Acknowledge("a", 0, 5, []AckType{AckAccept, AckRelease, AckAccept, AckReject, AckRenew, AckRenew}); err != nil {
		t.Fatal(err)
	}
	s := p.Snapshot()
	want := Snapshot{StartOffset: 1, Batches: []StateBatch{
		{1, 1, Available, 1}, {2, 2, Acknowledged, 1}, {3, 3, Archived, 1}, {4, 5, Available, 1},
	}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("snapshot %+v\nwant %+v", s, want)
	}
	r := Restore(p.cfg, c.now, s)
	got := r.Acquire("b", []BatchInfo{batch(0, 7)}, AcquireOptions{})
	if want := []AcquiredRange{{1, 1, 2}, {4, 5, 2}, {6, 7, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after restore: got %v want %v", got, want)
	}
	if n := r.ReleaseMember("b"); n != 5 {
		t.Fatalf("released %d, want 5", n)
	}
	if off, _ := r.FetchOffset(); off != 1 {
		t.Fatalf("fetch offset %d after release, want 1", off)
	}
}

func TestPartitionsTotalsOutliveDeletion(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	ps := NewPartitions(PartitionConfig{RecordLockDuration: time.Second}, c.now)
	k := PartitionKey{Group: "g"}
	p, err := ps.Get(k, func() (Snapshot, bool, error) { return Snapshot{}, false, nil }, func() int64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	p.Acquire("a", []BatchInfo{batch(0, 2)}, AcquireOptions{})
	if err := p.Acknowledge("a", 0, 0, []AckType{AckReject}); err != nil {
		t.Fatal(err)
	}
	c.advance(2 * time.Second)
	if got := ps.Totals(); got != (Stats{InFlight: 2, Acquired: 0, LockTimeouts: 2, Archived: 1}) {
		t.Fatalf("totals %+v", got)
	}
	ps.Delete(k)
	if got := ps.Totals(); got != (Stats{LockTimeouts: 2, Archived: 1}) {
		t.Fatalf("totals after delete %+v", got)
	}
}

// An acquisition whose state could not be written is taken back whole: the
// records are Available again and their next delivery is counted as the
// first, while records the member held before stay acquired.
func TestUnacquireRestoresDeliveryCount(t *testing.T) {
	p, _ := newTestPartition(0)
	held := p.Acquire("a", []BatchInfo{batch(0, 1)}, AcquireOptions{})
	failed := p.Acquire("a", []BatchInfo{batch(2, 4)}, AcquireOptions{})
	p.Unacquire("a", failed)
	for o := int64(0); o <= 4; o++ {
		st, d, _ := p.State(o)
		wantSt, wantD := Available, int16(0)
		if o <= 1 {
			wantSt, wantD = Acquired, 1
		}
		if st != wantSt || d != wantD {
			t.Fatalf("offset %d: %v with %d deliveries, want %v with %d (held %v)", o, st, d, wantSt, wantD, held)
		}
	}
	got := p.Acquire("b", []BatchInfo{batch(2, 4)}, AcquireOptions{})
	if want := []AcquiredRange{{2, 4, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("acquired again %v, want %v", got, want)
	}
	if st := p.Stats(); st.Acquired != 5 {
		t.Fatalf("acquired count %d, want 5", st.Acquired)
	}
}
