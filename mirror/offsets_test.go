package mirror

import "testing"

func TestOffsetMapTranslate(t *testing.T) {
	// Source offsets 10..14 at target 0..4; a transaction marker at 15;
	// 16..17 at 5..6; compaction removed 18..19; 20 at 7.
	var m offsetMap
	m.reset(0, 0)
	m.add(9, -1) // the starting sync: the record before the first
	newRuns := 0
	for _, p := range [][2]int64{{10, 0}, {11, 1}, {12, 2}, {13, 3}, {14, 4}, {16, 5}, {17, 6}, {20, 7}} {
		if m.add(p[0], p[1]) {
			newRuns++
		}
	}
	if newRuns != 2 {
		t.Fatalf("new runs = %d, want 2 (at 16 and 20)", newRuns)
	}
	tests := []struct {
		committed int64
		want      int64
		ok        bool
	}{
		{9, -1, true}, // before the first record: the sync itself
		{10, 0, true},
		{12, 2, true},
		{15, 5, true}, // on the marker: the next record is 16 at 5
		{16, 5, true},
		{17, 6, true},
		{18, 7, true}, // compacted away: next is 20 at 7
		{19, 7, true},
		{20, 7, true},
		{21, 8, true}, // everything consumed
		{22, 0, false},
		{5, 0, false}, // older than the history
	}
	for _, tt := range tests {
		got, ok := m.translate(tt.committed)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("translate(%d) = %d, %v; want %d, %v", tt.committed, got, ok, tt.want, tt.ok)
		}
	}
}

func TestOffsetMapLoadSyncs(t *testing.T) {
	// The syncs a session wrote: the start, periodic position syncs with
	// the same delta, and a new delta after a gap.
	var m offsetMap
	for _, s := range [][2]int64{{-1, 99}, {4, 104}, {9, 109}, {15, 115 - 3}, {20, 117}} {
		m.loadSync(s[0], s[1])
	}
	if len(m.runs) != 2 {
		t.Fatalf("runs = %+v, want 2", m.runs)
	}
	if m.srcNext != 21 || m.tgtNext != 118 {
		t.Fatalf("position = %d/%d, want 21/118", m.srcNext, m.tgtNext)
	}
	tests := []struct{ committed, want int64 }{
		{0, 100}, {9, 109}, {10, 110}, {12, 112}, {13, 112}, {15, 112}, {16, 113}, {21, 118},
	}
	for _, tt := range tests {
		got, ok := m.translate(tt.committed)
		if !ok || got != tt.want {
			t.Errorf("translate(%d) = %d, %v; want %d", tt.committed, got, ok, tt.want)
		}
	}
}

func TestOffsetMapBoundedHistory(t *testing.T) {
	var m offsetMap
	for i := int64(0); i < maxRuns+10; i++ {
		m.add(i*2, i) // every record is a new run (source gaps of one)
	}
	if len(m.runs) != maxRuns {
		t.Fatalf("runs = %d, want %d", len(m.runs), maxRuns)
	}
	if _, ok := m.translate(0); ok {
		t.Fatal("translated an offset older than the kept history")
	}
	if got, ok := m.translate(2 * (maxRuns + 9)); !ok || got != maxRuns+9 {
		t.Fatalf("translate(last) = %d, %v", got, ok)
	}
}
