package group

import (
	"errors"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/record"
)

func commit(group, member string, gen int32, offsets map[TopicPartition]int64) CommitRequest {
	r := CommitRequest{Group: group, MemberID: member, Generation: gen, RetentionMs: -1}
	for tp, o := range offsets {
		r.Partitions = append(r.Partitions, CommitPartition{TopicPartition: tp, Offset: o, LeaderEpoch: 3, Metadata: "m"})
	}
	return r
}

func (e *env) fetched(group string, tps ...TopicPartition) map[TopicPartition]int64 {
	e.t.Helper()
	var req []TopicPartition
	if len(tps) > 0 {
		req = tps
	}
	got, err := e.c.FetchOffsets(FetchRequest{Group: group, Partitions: req})
	if err != nil {
		e.t.Fatalf("fetch: %v", err)
	}
	out := map[TopicPartition]int64{}
	for _, f := range got {
		out[f.TopicPartition] = f.Offset.Offset
	}
	return out
}

var t0, t1 = TopicPartition{"t", 0}, TopicPartition{"t", 1}

func TestCommitValidation(t *testing.T) {
	e := newEnv(t, 1)
	ids, gen := stableGroup(t, e, 1)
	for _, tc := range []struct {
		name string
		req  CommitRequest
		want error
	}{
		{"member of the generation", commit("g", ids[0], gen, map[TopicPartition]int64{t0: 1}), nil},
		{"old generation", commit("g", ids[0], gen-1, map[TopicPartition]int64{t0: 1}), ErrIllegalGeneration},
		{"unknown member", commit("g", "x", gen, map[TopicPartition]int64{t0: 1}), ErrUnknownMemberID},
		{"no member while the group has members", commit("g", "", -1, map[TopicPartition]int64{t0: 1}), ErrUnknownMemberID},
		{"simple commit to a new group", commit("simple", "", -1, map[TopicPartition]int64{t0: 1}), nil},
		{"generation for an unknown group", commit("nope", "m", 3, map[TopicPartition]int64{t0: 1}), ErrIllegalGeneration},
		{"unknown group, v9+", func() CommitRequest {
			r := commit("nope", "m", 3, map[TopicPartition]int64{t0: 1})
			r.GroupIDNotFound = true
			return r
		}(), ErrGroupIDNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs, err := e.c.CommitOffsets(tc.req)
			if tc.want == nil {
				if err != nil || errs[0] != nil {
					t.Fatalf("commit = %v, %v", errs, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := e.c.DescribeGroup("nope"); !errors.Is(err, ErrGroupIDNotFound) {
		t.Fatalf("a refused commit created the group: %v", err)
	}
}

func TestCommitMetadataTooLarge(t *testing.T) {
	e := newEnv(t, 1)
	req := CommitRequest{Group: "g", Generation: -1, RetentionMs: -1, Partitions: []CommitPartition{
		{TopicPartition: t0, Offset: 1, Metadata: "small"},
		{TopicPartition: t1, Offset: 2, Metadata: "far more than sixteen bytes"},
	}}
	errs, err := e.c.CommitOffsets(req)
	if err != nil || errs[0] != nil || !errors.Is(errs[1], ErrOffsetMetadataTooLarge) {
		t.Fatalf("commit = %v, %v", errs, err)
	}
	if got := e.fetched("g", t0, t1); got[t0] != 1 || got[t1] != -1 {
		t.Fatalf("fetched = %v", got)
	}
}

func TestOffsetsAndGroupSurviveRestart(t *testing.T) {
	e := newEnv(t, 3)
	ids, gen := stableGroup(t, e, 2)
	if _, err := e.c.CommitOffsets(commit("g", ids[0], gen, map[TopicPartition]int64{t0: 10, t1: 20})); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.CommitOffsets(commit("g", ids[1], gen, map[TopicPartition]int64{t1: 21})); err != nil {
		t.Fatal(err)
	}
	e.c.CommitOffsets(commit("simple", "", -1, map[TopicPartition]int64{t0: 5}))
	e.c.DeleteOffsets("simple", []TopicPartition{t0})
	e.restart()
	if got := e.fetched("g"); len(got) != 2 || got[t0] != 10 || got[t1] != 21 {
		t.Fatalf("offsets after restart = %v", got)
	}
	got, _ := e.c.FetchOffsets(FetchRequest{Group: "g", Partitions: []TopicPartition{t0}})
	if got[0].LeaderEpoch != 3 || got[0].Metadata != "m" {
		t.Fatalf("offset = %+v", got[0])
	}
	d, err := e.c.DescribeGroup("g")
	if err != nil || d.State != StateStable || len(d.Members) != 2 || d.Protocol != "range" {
		t.Fatalf("group after restart = %+v, %v", d, err)
	}
	// Members keep their generation, and their sessions run again.
	if err := e.heartbeat("g", ids[0], gen); err != nil {
		t.Fatalf("heartbeat after restart: %v", err)
	}
	e.clock.Advance(11 * time.Second)
	if st := e.state("g"); st != StatePreparingRebalance && st != StateEmpty {
		t.Fatalf("state after sessions expired = %s", st)
	}
	if got := e.fetched("simple"); len(got) != 0 {
		t.Fatalf("deleted offsets came back: %v", got)
	}
}

func TestOffsetsExpireAfterGroupIsEmpty(t *testing.T) {
	e := newEnv(t, 1)
	ids, gen := stableGroup(t, e, 1)
	e.c.CommitOffsets(commit("g", ids[0], gen, map[TopicPartition]int64{t0: 7}))
	e.c.CommitOffsets(commit("simple", "", -1, map[TopicPartition]int64{t0: 1}))
	// The member stays for 30 minutes, heartbeating.
	for i := 0; i < 360; i++ {
		e.clock.Advance(5 * time.Second)
		if err := e.heartbeat("g", ids[0], gen); err != nil {
			t.Fatal(err)
		}
	}
	e.c.CommitOffsets(commit("simple", "", -1, map[TopicPartition]int64{t1: 2}))
	e.c.LeaveGroup("g", []LeavingMember{{MemberID: ids[0]}})
	e.clock.Advance(40 * time.Minute)
	e.c.ExpireOffsets()
	// The member-less group's first commit is older than an hour; the
	// managed group has been empty only 40 minutes.
	if got := e.fetched("simple"); len(got) != 1 || got[t1] != 2 {
		t.Fatalf("simple = %v", got)
	}
	if got := e.fetched("g"); got[t0] != 7 {
		t.Fatalf("g = %v", got)
	}
	e.clock.Advance(30 * time.Minute)
	e.c.ExpireOffsets()
	for _, g := range []string{"g", "simple"} {
		if _, err := e.c.DescribeGroup(g); !errors.Is(err, ErrGroupIDNotFound) {
			t.Fatalf("group %s still there: %v", g, err)
		}
	}
	e.restart()
	if got := e.fetched("g"); len(got) != 0 {
		t.Fatalf("expired offsets came back: %v", got)
	}
	if l, _ := e.c.ListGroups(nil, nil); len(l) != 0 {
		t.Fatalf("groups after restart: %+v", l)
	}
}

func TestExpiryRunsOnTheClock(t *testing.T) {
	e := newEnv(t, 1)
	e.c.CommitOffsets(commit("simple", "", -1, map[TopicPartition]int64{t0: 1}))
	stop := e.c.StartExpiry()
	defer stop()
	e.clock.Advance(59 * time.Minute)
	if _, err := e.c.DescribeGroup("simple"); err != nil {
		t.Fatalf("expired too early: %v", err)
	}
	e.clock.Advance(2 * time.Minute) // checks every minute; the commit is now over an hour old
	if _, err := e.c.DescribeGroup("simple"); !errors.Is(err, ErrGroupIDNotFound) {
		t.Fatalf("group still there: %v", err)
	}
}

func TestDeleteGroupsAndOffsetDelete(t *testing.T) {
	e := newEnv(t, 1)
	ids, gen := stableGroup(t, e, 1)
	e.c.CommitOffsets(commit("g", ids[0], gen, map[TopicPartition]int64{t0: 1, {"other", 0}: 4}))
	errs, err := e.c.DeleteOffsets("g", []TopicPartition{t0, {"other", 0}})
	if err != nil || !errors.Is(errs[0], ErrGroupSubscribedToTopic) || errs[1] != nil {
		t.Fatalf("offset delete = %v, %v", errs, err)
	}
	if got := e.fetched("g"); len(got) != 1 || got[t0] != 1 {
		t.Fatalf("offsets = %v", got)
	}
	if errs := e.c.DeleteGroups([]string{"g", "missing"}); !errors.Is(errs[0], ErrNonEmptyGroup) || !errors.Is(errs[1], ErrGroupIDNotFound) {
		t.Fatalf("delete = %v", errs)
	}
	e.c.LeaveGroup("g", []LeavingMember{{MemberID: ids[0]}})
	if errs := e.c.DeleteGroups([]string{"g"}); errs[0] != nil {
		t.Fatalf("delete = %v", errs)
	}
	e.restart()
	if _, err := e.c.DescribeGroup("g"); !errors.Is(err, ErrGroupIDNotFound) {
		t.Fatalf("deleted group came back: %v", err)
	}
}

func TestListGroupsFilters(t *testing.T) {
	e := newEnv(t, 3)
	stableGroup(t, e, 1)
	e.c.CommitOffsets(commit("simple", "", -1, map[TopicPartition]int64{t0: 1}))
	for _, tc := range []struct {
		states, types []string
		want          []string
	}{
		{nil, nil, []string{"g", "simple"}},
		{[]string{"stable"}, nil, []string{"g"}},
		{[]string{"Empty"}, []string{"CLASSIC"}, []string{"simple"}},
		{nil, []string{"consumer"}, nil},
	} {
		l, err := e.c.ListGroups(tc.states, tc.types)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range l {
			names = append(names, g.Group)
		}
		if len(names) != len(tc.want) || (len(names) > 0 && names[0] != tc.want[0]) {
			t.Fatalf("list %v %v = %v, want %v", tc.states, tc.types, names, tc.want)
		}
	}
}

func TestLoadingAnswersLoadInProgress(t *testing.T) {
	e := newEnv(t, 1)
	s := e.c.shards[0]
	s.mu.Lock()
	s.loaded = false
	s.mu.Unlock()
	if _, err := e.c.FetchOffsets(FetchRequest{Group: "g"}); !errors.Is(err, ErrCoordinatorLoadInProgress) {
		t.Fatalf("fetch while loading = %v", err)
	}
	e.c.Assign(1, nil)
	if _, err := e.c.FetchOffsets(FetchRequest{Group: "g"}); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("fetch after resigning = %v", err)
	}
}

func TestResignAnswersWaitingMembers(t *testing.T) {
	e := newEnv(t, 1)
	_, jc := e.newMember("g")
	e.c.Assign(1, nil)
	if r, ok := jc.answer(); !ok || !errors.Is(r.Err, ErrNotCoordinator) {
		t.Fatalf("waiting join after resign = %+v, %v", r, ok)
	}
}

func TestDecodeCorruptRecords(t *testing.T) {
	for _, tc := range []struct {
		name       string
		key, value []byte
	}{
		{"short key", []byte{0}, nil},
		{"negative key version", []byte{0xff, 0xff}, nil},
		{"truncated offset key", []byte{0, 1, 0, 5, 'a'}, nil},
		{"truncated offset value", encodeOffsetKey("g", t0), []byte{0, 3, 0, 0}},
		{"unknown value version", encodeOffsetKey("g", t0), []byte{0, 9, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"group value with a huge member count", encodeGroupKey("g"), []byte{0, 3, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := newLoadState()
			if err := ls.apply(tc.key, tc.value); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestLoadSkipsCorruptRecordsAndKeepsTheRest(t *testing.T) {
	e := newEnv(t, 1)
	e.c.CommitOffsets(commit("g", "", -1, map[TopicPartition]int64{t0: 3}))
	bad, err := record.Encode(record.BatchSpec{FirstTimestamp: testStart.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]record.Record{{Key: []byte{0, 1, 0}, Value: []byte{1}}, {Key: encodeOffsetKey("g", t1), Value: encodeOffsetValue(Offset{Offset: 9, LeaderEpoch: -1, ExpireTime: -1})}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.parts[0].Append(bad); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if got := e.fetched("g"); got[t0] != 3 || got[t1] != 9 {
		t.Fatalf("offsets = %v", got)
	}
}

func TestRecordsReadAsKafkaSchemas(t *testing.T) {
	// The bytes follow Kafka's schemas field by field.
	key := encodeOffsetKey("grp", TopicPartition{"top", 7})
	want := []byte{0, 1, 0, 3, 'g', 'r', 'p', 0, 3, 't', 'o', 'p', 0, 0, 0, 7}
	if string(key) != string(want) {
		t.Fatalf("offset key = %v, want %v", key, want)
	}
	v := encodeOffsetValue(Offset{Offset: 42, LeaderEpoch: 5, Metadata: "x", CommitTime: 1000, ExpireTime: -1})
	wantV := []byte{0, 3, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 5, 0, 1, 'x', 0, 0, 0, 0, 0, 0, 3, 0xe8}
	if string(v) != string(wantV) {
		t.Fatalf("offset value = %v, want %v", v, wantV)
	}
	if gk := encodeGroupKey("grp"); string(gk) != string([]byte{0, 2, 0, 3, 'g', 'r', 'p'}) {
		t.Fatalf("group key = %v", gk)
	}
}
