package log

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gregorbroker/gregor/core/record"
)

// tsLog holds batches (2 records each, timestamps ts and ts+5) spread over
// segments: offsets 0-1 at 100/105, 2-3 at 300/305, 4-5 at 200/205 (out of
// order), 6-7 at 500/505, 8-9 at 500/505 again (a tie), 10-11 at 700 under
// log append time. Leader epochs are 0, 0, 1, 1, 2 and 3.
func tsLog(t *testing.T) (*env, *Log) {
	cfg := tinyConfig()
	cfg.SegmentBytes = 300 // about two batches a segment
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	for i, ts := range []int64{100, 300, 200, 500, 500} {
		mustAppend(t, l, makeBatch(t, batchSpec{records: 2, ts: ts, tsStep: 5, epoch: int32(i / 2)}))
	}
	b := makeBatch(t, batchSpec{records: 2, ts: 1, tsStep: 5, epoch: 3})
	record.SetLogAppendTime(b, 700)
	mustAppend(t, l, b)
	return e, l
}

func TestOffsetForTimestamp(t *testing.T) {
	_, l := tsLog(t)
	if len(l.Segments()) < 3 {
		t.Fatalf("fixture has %d segments; want several", len(l.Segments()))
	}
	tests := []struct {
		ts        int64
		wantOff   int64
		wantTS    int64
		wantEpoch int32
		wantFound bool
	}{
		{0, 0, 100, 0, true},
		{100, 0, 100, 0, true},
		{101, 1, 105, 0, true},
		{106, 2, 300, 0, true},
		{201, 2, 300, 0, true}, // the first record by offset, not the closest timestamp
		{301, 3, 305, 0, true},
		{306, 6, 500, 1, true},
		{505, 7, 505, 1, true},
		{506, 10, 700, 3, true},
		{700, 10, 700, 3, true},
		{701, -1, -1, -1, false},
	}
	for _, tt := range tests {
		off, ts, epoch, found, err := l.OffsetForTimestamp(tt.ts)
		if err != nil {
			t.Fatalf("OffsetForTimestamp(%d): %v", tt.ts, err)
		}
		if found != tt.wantFound || (found && (off != tt.wantOff || ts != tt.wantTS || epoch != tt.wantEpoch)) {
			t.Errorf("OffsetForTimestamp(%d) = (%d, %d, %d, %v), want (%d, %d, %d, %v)",
				tt.ts, off, ts, epoch, found, tt.wantOff, tt.wantTS, tt.wantEpoch, tt.wantFound)
		}
	}
	// Records below the log start offset are not answers.
	if err := l.DeleteRecordsBefore(1); err != nil {
		t.Fatal(err)
	}
	if off, ts, _, found, _ := l.OffsetForTimestamp(0); !found || off != 1 || ts != 105 {
		t.Fatalf("after DeleteRecordsBefore(1): (%d, %d, %v)", off, ts, found)
	}
}

func TestMaxTimestamp(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	if off, ts, ep, err := l.MaxTimestamp(); err != nil || off != -1 || ts != -1 || ep != -1 {
		t.Fatalf("empty log: (%d, %d, %d, %v)", off, ts, ep, err)
	}
	_, l = tsLog(t)
	off, ts, ep, err := l.MaxTimestamp()
	if err != nil || off != 10 || ts != 700 || ep != 3 {
		t.Fatalf("MaxTimestamp = (%d, %d, %d, %v), want (10, 700, 3)", off, ts, ep, err)
	}
	// Without the log-append-time batch the maximum is the tie at 505: the
	// first batch to reach it wins, and within it the record carrying it.
	if err := l.Truncate(10); err != nil {
		t.Fatal(err)
	}
	off, ts, ep, err = l.MaxTimestamp()
	if err != nil || off != 7 || ts != 505 || ep != 1 {
		t.Fatalf("MaxTimestamp = (%d, %d, %d, %v), want (7, 505, 1)", off, ts, ep, err)
	}
}

func TestLeaderEpochs(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	if _, ok := l.LatestEpoch(); ok {
		t.Fatal("empty log has an epoch")
	}
	// Epochs 0 (offsets 0-3), 2 (4-7), 5 (8-11); -1 batches carry none.
	for _, ep := range []int32{0, 0, -1, 2, 2, 5, 5} {
		mustAppend(t, l, makeBatch(t, batchSpec{records: 2, ts: 1, epoch: ep}))
	}
	checkFile := func(want string) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(l.Path(), leaderEpochFile))
		if err != nil || string(got) != want {
			t.Fatalf("leader-epoch-checkpoint = %q (%v), want %q", got, err, want)
		}
	}
	checkFile("0\n3\n0 0\n2 6\n5 10\n")
	tests := []struct {
		epoch     int32
		wantEpoch int32
		wantEnd   int64
	}{
		{-1, -1, -1}, {0, 0, 6}, {1, 0, 6}, {2, 2, 10}, {3, 2, 10}, {5, 5, 14}, {6, -1, -1},
	}
	for _, tt := range tests {
		if e, end := l.EndOffsetForEpoch(tt.epoch); e != tt.wantEpoch || end != tt.wantEnd {
			t.Errorf("EndOffsetForEpoch(%d) = (%d, %d), want (%d, %d)", tt.epoch, e, end, tt.wantEpoch, tt.wantEnd)
		}
	}
	// Truncation drops epochs that start at or past the new end.
	if err := l.Truncate(10); err != nil {
		t.Fatal(err)
	}
	if ep, _ := l.LatestEpoch(); ep != 2 {
		t.Fatalf("latest epoch %d after truncation, want 2", ep)
	}
	checkFile("0\n2\n0 0\n2 6\n")
	// Raising the start offset keeps the epoch in force there.
	if err := l.DeleteRecordsBefore(7); err != nil {
		t.Fatal(err)
	}
	checkFile("0\n1\n2 7\n")
	if e, end := l.EndOffsetForEpoch(1); e != 1 || end != 7 {
		t.Fatalf("EndOffsetForEpoch(1) below every known epoch = (%d, %d), want (1, 7)", e, end)
	}
	// A lost or damaged file is rebuilt from the batches.
	e.dir.Close()
	os.WriteFile(filepath.Join(l.Path(), leaderEpochFile), []byte("0\n9\nbad"), 0o644)
	e.dir = nil
	e.open()
	l, _ = e.dir.Log("t", 0)
	if ep, ok := l.LatestEpoch(); !ok || ep != 2 {
		t.Fatalf("rebuilt latest epoch %d %v", ep, ok)
	}
	checkFile("0\n1\n2 7\n")
}

func TestEpochCacheAssign(t *testing.T) {
	tests := []struct {
		name   string
		assign [][2]int64
		want   []epochEntry
	}{
		{"monotonic", [][2]int64{{0, 0}, {1, 5}, {3, 9}}, []epochEntry{{0, 0}, {1, 5}, {3, 9}}},
		{"same epoch later offset", [][2]int64{{1, 0}, {1, 5}}, []epochEntry{{1, 0}}},
		{"same epoch earlier offset", [][2]int64{{1, 5}, {1, 2}}, []epochEntry{{1, 2}}},
		{"lower epoch replaces", [][2]int64{{0, 0}, {4, 5}, {2, 7}}, []epochEntry{{0, 0}, {2, 7}}},
		{"earlier offset replaces", [][2]int64{{0, 0}, {2, 5}, {3, 4}}, []epochEntry{{0, 0}, {3, 4}}},
		{"negative ignored", [][2]int64{{-1, 0}, {0, -1}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &epochCache{}
			for _, a := range tt.assign {
				c.assign(int32(a[0]), a[1])
			}
			if len(c.entries) != len(tt.want) {
				t.Fatalf("entries %v, want %v", c.entries, tt.want)
			}
			for i := range tt.want {
				if c.entries[i] != tt.want[i] {
					t.Fatalf("entries %v, want %v", c.entries, tt.want)
				}
			}
		})
	}
}
