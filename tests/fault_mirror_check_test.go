package tests

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The checker of the mirror fault suite: the acknowledged source records,
// the target's records as a consumer reads them (read_committed under
// exactly_once) and the gaps the mirror reported are compared partition by
// partition.
//
//   - lost: acknowledged on the source, not on the target, and in no gap
//     the mirror reported (a silent gap is loss, whatever its cause);
//   - duplicated: a source record on the target more than once (an
//     anomaly with exactly_once and in link mode; counted otherwise);
//   - reordered: a record on the target before one that preceded it on
//     the source partition;
//   - offset mismatch (link mode): a record at another offset than on the
//     source, or the target's record at a source offset is another record;
//   - false gap: a reported gap over offsets the source never deleted
//     (records the mirror dropped and called deleted);
//   - group skip: a consumer group resuming on the target from its
//     mirrored committed offset (translated in copy mode, the source's in
//     link mode) would not receive a record it had not processed on the
//     source: an acknowledged record at or after the source group's
//     committed offset whose every copy on the target lies below the
//     target group's offset.

// mirrorEvidence is what a seed leaves to judge.
type mirrorEvidence struct {
	link       bool                       // offsets must be the source's
	exactly    bool                       // a duplicate is an anomaly
	acked      map[int32]map[int64]string // source offset -> value acknowledged there
	target     map[int32][]mirrorRecord   // in target order
	gaps       map[int32][]offsetRange    // reported by the mirror
	deletedTo  map[int32]int64            // the source's log start set by DeleteRecords
	targetName string
	// srcGroup and tgtGroup are a consumer group's committed offsets on
	// the source partition and on its mirror (nil: no group checked).
	srcGroup, tgtGroup map[int32]int64
}

// offsetRange is [From, To], both included, as the mirror reports it.
type offsetRange struct{ From, To int64 }

type mirrorReport struct {
	Acked, OnTarget, InGaps, Duplicates   int
	Lost, Duplicated, Reordered, Mismatch []string
	FalseGaps                             []string
	// GroupChecked counts the partitions whose mirrored group offset was
	// checked; GroupSkips are the records a resuming consumer would skip.
	GroupChecked int
	GroupSkips   []string
}

func (r mirrorReport) anomalies(ev mirrorEvidence) int {
	n := len(r.Lost) + len(r.Reordered) + len(r.Mismatch) + len(r.FalseGaps) + len(r.GroupSkips)
	if ev.exactly || ev.link {
		n += len(r.Duplicated)
	}
	return n
}

func (r mirrorReport) String() string {
	first := func(s []string) string { return strings.Join(s[:min(len(s), 10)], "; ") }
	return fmt.Sprintf("acked %d, on target %d, in reported gaps %d, duplicates %d; lost %d [%s], duplicated %d [%s], reordered %d [%s], offset mismatch %d [%s], false gaps %d [%s]; group offsets checked on %d partitions, skips %d [%s]",
		r.Acked, r.OnTarget, r.InGaps, r.Duplicates, len(r.Lost), first(r.Lost), len(r.Duplicated), first(r.Duplicated),
		len(r.Reordered), first(r.Reordered), len(r.Mismatch), first(r.Mismatch), len(r.FalseGaps), first(r.FalseGaps),
		r.GroupChecked, len(r.GroupSkips), first(r.GroupSkips))
}

func analyzeMirror(ev mirrorEvidence) mirrorReport {
	var rep mirrorReport
	parts := map[int32]bool{}
	for p := range ev.acked {
		parts[p] = true
	}
	for p := range ev.target {
		parts[p] = true
	}
	ps := make([]int32, 0, len(parts))
	for p := range parts {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		for _, g := range ev.gaps[p] {
			if g.To >= ev.deletedTo[p] {
				rep.FalseGaps = append(rep.FalseGaps, fmt.Sprintf("p%d %d-%d (source deleted below %d)", p, g.From, g.To, ev.deletedTo[p]))
			}
		}
		if _, ok := ev.tgtGroup[p]; ok {
			if _, ok := ev.srcGroup[p]; ok {
				rep.GroupChecked++
			}
		}
		pos := map[string]int{}      // value -> first target index
		lastAt := map[string]int64{} // value -> its last target offset
		for i, r := range ev.target[p] {
			lastAt[r.Value] = max(lastAt[r.Value], r.Offset)
			rep.OnTarget++
			if _, seen := pos[r.Value]; seen {
				rep.Duplicates++
				rep.Duplicated = append(rep.Duplicated, fmt.Sprintf("p%d %s at target offset %d", p, r.Value, r.Offset))
				continue
			}
			pos[r.Value] = i
		}
		byOffset := map[int64]mirrorRecord{}
		if ev.link {
			for _, r := range ev.target[p] {
				byOffset[r.Offset] = r
			}
		}
		offs := make([]int64, 0, len(ev.acked[p]))
		for o := range ev.acked[p] {
			offs = append(offs, o)
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		last, lastOff := -1, int64(-1)
		for _, o := range offs {
			v := ev.acked[p][o]
			rep.Acked++
			i, ok := pos[v]
			if !ok {
				if inRanges(ev.gaps[p], o) {
					rep.InGaps++
				} else {
					rep.Lost = append(rep.Lost, fmt.Sprintf("p%d@%d %s", p, o, v))
				}
				continue
			}
			if i < last {
				rep.Reordered = append(rep.Reordered, fmt.Sprintf("p%d@%d %s on the target before p%d@%d", p, o, v, p, lastOff))
			} else {
				last, lastOff = i, o
			}
			if from, ok := ev.srcGroup[p]; ok && o >= from {
				// Not processed on the source: a consumer resuming on
				// the target at the group's offset must receive it.
				if at, ok := ev.tgtGroup[p]; ok && lastAt[v] < at {
					rep.GroupSkips = append(rep.GroupSkips, fmt.Sprintf("p%d@%d %s: source group at %d, target group at %d, record at target offset %d",
						p, o, v, from, at, lastAt[v]))
				}
			}
			if ev.link {
				if got := ev.target[p][i].Offset; got != o {
					rep.Mismatch = append(rep.Mismatch, fmt.Sprintf("p%d %s: source offset %d, target %d", p, v, o, got))
				} else if r := byOffset[o]; r.Value != v {
					rep.Mismatch = append(rep.Mismatch, fmt.Sprintf("p%d@%d: source %s, target %s", p, o, v, r.Value))
				}
			}
		}
	}
	return rep
}

func inRanges(rs []offsetRange, o int64) bool {
	for _, r := range rs {
		if o >= r.From && o <= r.To {
			return true
		}
	}
	return false
}

// mirrorGapLine is how the mirror reports a source gap in its log.
var mirrorGapLine = regexp.MustCompile(`source (\S+)\[(\d+)\] deleted offsets (\d+) to (\d+) `)

// reportedGaps collects the gaps of topic the mirror logged.
func reportedGaps(logs, topic string) map[int32][]offsetRange {
	out := map[int32][]offsetRange{}
	for _, m := range mirrorGapLine.FindAllStringSubmatch(logs, -1) {
		if m[1] != topic {
			continue
		}
		p, _ := strconv.Atoi(m[2])
		from, _ := strconv.ParseInt(m[3], 10, 64)
		to, _ := strconv.ParseInt(m[4], 10, 64)
		r := offsetRange{from, to}
		if !slices.Contains(out[int32(p)], r) {
			out[int32(p)] = append(out[int32(p)], r)
		}
	}
	return out
}

func TestMirrorFaultCheckerFindsAnomalies(t *testing.T) {
	acked := map[int32]map[int64]string{0: {0: "a", 1: "b", 2: "c", 3: "d", 4: "e", 5: "f"}}
	rec := func(off int64, v string) mirrorRecord { return mirrorRecord{Offset: off, Value: v} }
	clean := []mirrorRecord{rec(0, "a"), rec(1, "b"), rec(2, "c"), rec(3, "d"), rec(4, "e"), rec(5, "f")}
	for _, link := range []bool{false, true} {
		ev := mirrorEvidence{link: link, acked: acked, target: map[int32][]mirrorRecord{0: clean}}
		if rep := analyzeMirror(ev); rep.anomalies(ev) != 0 || rep.Acked != 6 || rep.OnTarget != 6 {
			t.Fatalf("link %v, a clean copy: %s", link, rep)
		}
	}
	tests := []struct {
		name    string
		ev      mirrorEvidence
		check   func(mirrorReport) []string
		want    []string
		anomaly bool
	}{
		{"lost", mirrorEvidence{target: map[int32][]mirrorRecord{0: {rec(0, "a"), rec(1, "b"), rec(2, "d"), rec(3, "e"), rec(4, "f")}}},
			func(r mirrorReport) []string { return r.Lost }, []string{"p0@2 c"}, true},
		{"duplicated at least once", mirrorEvidence{target: map[int32][]mirrorRecord{0: append(slices.Clone(clean[:4]), rec(4, "c"), rec(5, "d"), rec(6, "e"), rec(7, "f"))}},
			func(r mirrorReport) []string { return r.Duplicated }, []string{"p0 c at target offset 4", "p0 d at target offset 5"}, false},
		{"duplicated exactly once", mirrorEvidence{exactly: true, target: map[int32][]mirrorRecord{0: append(slices.Clone(clean), rec(6, "f"))}},
			func(r mirrorReport) []string { return r.Duplicated }, []string{"p0 f at target offset 6"}, true},
		{"reordered", mirrorEvidence{target: map[int32][]mirrorRecord{0: {rec(0, "a"), rec(1, "c"), rec(2, "b"), rec(3, "d"), rec(4, "e"), rec(5, "f")}}},
			func(r mirrorReport) []string { return r.Reordered }, []string{"p0@2 c on the target before p0@1"}, true},
		{"offset shifted in link mode", mirrorEvidence{link: true, target: map[int32][]mirrorRecord{0: {rec(0, "a"), rec(1, "b"), rec(2, "c"), rec(4, "d"), rec(5, "e"), rec(6, "f")}}},
			func(r mirrorReport) []string { return r.Mismatch }, []string{"p0 d: source offset 3, target 4", "p0 e: source offset 4, target 5", "p0 f: source offset 5, target 6"}, true},
		{"offsets ignored in copy mode", mirrorEvidence{target: map[int32][]mirrorRecord{0: {rec(0, "a"), rec(1, "b"), rec(2, "c"), rec(4, "d"), rec(5, "e"), rec(6, "f")}}},
			func(r mirrorReport) []string { return r.Mismatch }, nil, false},
		{"reported gap over deleted records", mirrorEvidence{gaps: map[int32][]offsetRange{0: {{1, 2}}}, deletedTo: map[int32]int64{0: 3},
			target: map[int32][]mirrorRecord{0: {rec(0, "a"), rec(1, "d"), rec(2, "e"), rec(3, "f")}}},
			func(r mirrorReport) []string { return append(r.Lost, r.FalseGaps...) }, nil, false},
		{"silent gap", mirrorEvidence{deletedTo: map[int32]int64{0: 3}, target: map[int32][]mirrorRecord{0: {rec(0, "a"), rec(1, "d"), rec(2, "e"), rec(3, "f")}}},
			func(r mirrorReport) []string { return r.Lost }, []string{"p0@1 b", "p0@2 c"}, true},
		{"false gap", mirrorEvidence{gaps: map[int32][]offsetRange{0: {{3, 4}}}, deletedTo: map[int32]int64{0: 2},
			target: map[int32][]mirrorRecord{0: {rec(0, "a"), rec(1, "b"), rec(2, "c"), rec(3, "f")}}},
			func(r mirrorReport) []string { return r.FalseGaps }, []string{"p0 3-4 (source deleted below 2)"}, true},
	}
	// Group offsets: the source group processed a..c (committed 3); the
	// target copy holds a..f at target offsets 10..15.
	shifted := []mirrorRecord{rec(10, "a"), rec(11, "b"), rec(12, "c"), rec(13, "d"), rec(14, "e"), rec(15, "f")}
	grp := func(link bool, tgt int64, target []mirrorRecord) mirrorEvidence {
		return mirrorEvidence{link: link, target: map[int32][]mirrorRecord{0: target},
			srcGroup: map[int32]int64{0: 3}, tgtGroup: map[int32]int64{0: tgt}}
	}
	tests = append(tests, []struct {
		name    string
		ev      mirrorEvidence
		check   func(mirrorReport) []string
		want    []string
		anomaly bool
	}{
		{"group translated exactly", grp(false, 13, shifted), func(r mirrorReport) []string { return r.GroupSkips }, nil, false},
		{"group translated behind (re-reads)", grp(false, 11, shifted), func(r mirrorReport) []string { return r.GroupSkips }, nil, false},
		{"group translated past an unprocessed record", grp(false, 14, shifted), func(r mirrorReport) []string { return r.GroupSkips },
			[]string{"p0@3 d: source group at 3, target group at 14, record at target offset 13"}, true},
		{"group skip saved by a later duplicate", grp(false, 14, append(slices.Clone(shifted), rec(16, "d"), rec(17, "e"), rec(18, "f"))),
			func(r mirrorReport) []string { return r.GroupSkips }, nil, false},
		{"link group at the source offset", grp(true, 3, clean), func(r mirrorReport) []string { return r.GroupSkips }, nil, false},
		{"link group one past", grp(true, 4, clean), func(r mirrorReport) []string { return r.GroupSkips },
			[]string{"p0@3 d: source group at 3, target group at 4, record at target offset 3"}, true},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.ev.acked = acked
			rep := analyzeMirror(tt.ev)
			if got := tt.check(rep); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q (%s)", got, tt.want, rep)
			}
			if got := rep.anomalies(tt.ev) > 0; got != tt.anomaly {
				t.Errorf("anomaly %v, want %v (%s)", got, tt.anomaly, rep)
			}
		})
	}
	logs := `time=x level=ERROR msg="skipping deleted offsets (on_source_gap = skip)" topic=orders partition=3 err="mirror: source orders[3] deleted offsets 100 to 199 (100 offsets) before they were mirrored"
time=y level=ERROR msg="skipping deleted offsets (on_source_gap = skip)" topic=orders partition=3 err="mirror: source orders[3] deleted offsets 100 to 199 (100 offsets) before they were mirrored"
time=z level=ERROR msg=x err="mirror: source other[1] deleted offsets 5 to 6 (2 offsets) before they were mirrored"`
	if got := reportedGaps(logs, "orders"); len(got) != 1 || !slices.Equal(got[3], []offsetRange{{100, 199}}) {
		t.Errorf("reportedGaps = %v", got)
	}
}

// TestMirrorFaultGroupCommitsNeverRewind: a reader-group commit whose
// answer was lost counts as stored, so the harness never commits below it
// (before, only acknowledged commits counted: a timed-out commit applied
// later left the source group above a later, lower one, and copy seed 2
// reported 8 false skips); a commit the coordinator refused does not count.
func TestMirrorFaultGroupCommitsNeverRewind(t *testing.T) {
	committed := map[int32]int64{0: 100}
	offs := func(ps ...int64) kadm.Offsets {
		o := kadm.Offsets{}
		for i := 0; i < len(ps); i += 2 {
			o.Add(kadm.Offset{Topic: "orders", Partition: int32(ps[i]), At: ps[i+1]})
		}
		return o
	}
	answer := func(o kadm.Offsets, err error) kadm.OffsetResponses {
		r := kadm.OffsetResponses{}
		o.Each(func(x kadm.Offset) {
			if r[x.Topic] == nil {
				r[x.Topic] = map[int32]kadm.OffsetResponse{}
			}
			r[x.Topic][x.Partition] = kadm.OffsetResponse{Offset: x, Err: err}
		})
		return r
	}
	lost := offs(0, 120, 1, 50)
	noteGroupCommit(committed, lost, nil, context.DeadlineExceeded)
	refused := offs(0, 130)
	noteGroupCommit(committed, refused, answer(refused, kerr.CoordinatorNotAvailable), nil)
	if committed[0] != 120 || committed[1] != 50 {
		t.Fatalf("after a lost and a refused commit: %v, want p0 120, p1 50", committed)
	}
	ok := offs(0, 125)
	noteGroupCommit(committed, ok, answer(ok, nil), nil)
	if committed[0] != 125 {
		t.Fatalf("after an acknowledged commit: %v, want p0 125", committed)
	}
}
