package tests

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The checkers of the fault suite's workloads, fed evidence with one
// planted anomaly each: a checker that cannot see its anomaly would let a
// broken broker pass the suite.

func TestGroupCheckerFindsAnomalies(t *testing.T) {
	g := newGroupWorkload("g", "t")
	g.judge("after fault 0", map[int32]int64{0: 10, 1: 5}, map[int32]int64{0: 10, 1: 5}, nil)
	if g.anomalies() != 0 {
		t.Fatalf("a clean check: %s", g)
	}
	// p0 back below an acknowledged commit, p1 gone, p2 below an earlier fetch.
	g.judge("after fault 1", map[int32]int64{0: 12}, map[int32]int64{0: 11, 2: 7}, nil)
	g.judge("after fault 2", map[int32]int64{0: 12}, map[int32]int64{0: 12, 1: 5, 2: 6}, nil)
	g.judge("after fault 3", nil, nil, errors.New("COORDINATOR_NOT_AVAILABLE"))
	want := []string{
		"after fault 1: p0 committed 11 below acknowledged 12",
		"after fault 1: p1 committed none below fetched 5",
		"after fault 2: p2 committed 6 below fetched 7",
	}
	if !slices.Equal(g.backwards, want) || len(g.fetchErrs) != 1 {
		t.Fatalf("backwards %q (want %q), fetch errors %q", g.backwards, want, g.fetchErrs)
	}

	// Every record below the highest committed offset (12 on p0) must have
	// been received, as the log holds it.
	g = newGroupWorkload("g", "t")
	g.judge("end", map[int32]int64{0: 3}, map[int32]int64{0: 3}, nil)
	g.received[recordAddress{0, 0}] = "a"
	g.received[recordAddress{0, 2}] = "x"
	final := []*kgo.Record{
		{Partition: 0, Offset: 0, Value: []byte("a")},
		{Partition: 0, Offset: 1, Value: []byte("b")}, // never received
		{Partition: 0, Offset: 2, Value: []byte("c")}, // received as x
		{Partition: 0, Offset: 3, Value: []byte("d")}, // above the commit: may be unseen
	}
	g.checkReceived(final)
	if !slices.Equal(g.unseen, []string{"p0@1"}) || len(g.conflicts) != 1 || g.anomalies() != 2 {
		t.Fatalf("unseen %q, conflicts %q", g.unseen, g.conflicts)
	}
}

func TestEOSCheckerFindsAnomalies(t *testing.T) {
	in := func(off int64, key, v string) outRec {
		return outRec{at: recordAddress{0, off}, key: key, value: v}
	}
	out := func(off, pid int64, v, txn string) outRec {
		return outRec{at: recordAddress{0, off}, producerID: pid, txnal: true, key: v[:1], value: v, txn: txn}
	}
	marker := func(off, pid int64, commit bool) outRec {
		return outRec{at: recordAddress{0, off}, producerID: pid, control: true, commitMarker: commit}
	}
	input := []outRec{in(0, "a", "a0"), in(1, "a", "a1"), in(2, "a", "a2"), in(3, "b", "b0"), in(4, "b", "b1")}
	raw := []outRec{
		out(0, 7, "a0", "m0.1"), out(1, 8, "a1", "m1.1"), marker(2, 7, true), // a0 committed
		out(3, 8, "b1", "m1.1"), marker(4, 8, false), // a1, b1 aborted
		out(5, 7, "a2", "m0.2"), out(6, 7, "b1", "m0.2"), out(7, 7, "a1", "m0.2"), out(8, 7, "a0", "m0.2"), marker(9, 7, true),
		out(10, 9, "zz", "m2.1"), marker(11, 9, true), // foreign
		out(12, 7, "b0", "m0.3"), // still open
	}
	visible := []outRec{raw[0], raw[2], raw[3] /* aborted, visible */, raw[5], raw[6], raw[8] /* a0 again */, raw[9], raw[10], raw[11]}
	// Not visible: a1 at 7 (committed) -- invisible, and a1 missing.
	ev := eosEvidence{
		inAcked: map[string]recordAddress{"a0": {0, 0}, "a1": {0, 1}, "a2": {0, 2}, "b0": {0, 3}, "b1": {0, 4}, "c9": {0, 5}},
		outcome: map[string]string{"m0.1": "commit", "m1.1": "abort", "m0.2": "commit", "m2.1": "unknown", "m0.3": "unknown"},
		values:  map[string][]string{"m0.1": {"a0"}, "m0.2": {"a2", "b1", "a1", "a0"}},
		input:   input, raw: raw, visible: visible,
		lso: map[int32]int64{0: 12},
	}
	var rep eosReport
	analyzeEOS(ev, &rep)
	check := func(what string, got []string, want ...string) {
		t.Helper()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	check("lost input", rep.LostInput, "c9")
	check("missing", rep.Missing, "a1", "b0")
	check("duplicated", rep.Duplicated, "a0@p0:8", "b1@p0:6") // b1 once aborted and visible, once committed
	check("aborted read", rep.AbortedRead, "p0@3:b1(markers)")
	check("committed lost", rep.CommittedLost, "m0.2:a1(committed-by-marker)")
	check("hanging", rep.Hanging, "p0@12")
	check("invisible", rep.Invisible, "p0@7")
	check("foreign", rep.Foreign, `p0@10:"zz"`)
	if rep.Committed != 2 || rep.Aborted != 1 || rep.Unknown != 2 || rep.ok() {
		t.Errorf("counts %+v", rep)
	}
	// Per-key order: b1 before b0 is out of order only when both are
	// visible; plant it.
	ev.visible = append(ev.visible, out(13, 7, "b0", "m0.4"))
	rep = eosReport{}
	analyzeEOS(ev, &rep)
	check("out of order", rep.OutOfOrder, "b0-after-input#1")
	if !strings.Contains(rep.String(), "out of order 1") {
		t.Errorf("report: %s", rep)
	}
	// The target of a read_committed drain: the last marker or committed
	// record below the LSO.
	if got := visibleTarget(markerFates(raw), map[int32]int64{0: 13, 1: 0}, map[int32]int64{0: 12, 1: 0}); got[0] != 11 || got[1] != -1 {
		t.Errorf("visibleTarget = %v", got)
	}
	// A transaction its member was told was aborted, committed by the log.
	raw = []outRec{out(0, 5, "a0", "t1"), marker(1, 5, true)}
	ev = eosEvidence{outcome: map[string]string{"t1": "abort"}, input: input[:1], raw: raw, visible: raw, lso: map[int32]int64{0: 2}}
	rep = eosReport{}
	analyzeEOS(ev, &rep)
	check("aborted read by the client's word", rep.AbortedRead, "p0@0:a0(txn-t1-aborted,committed-by-marker)")
}
