package group

import (
	"reflect"
	"testing"
)

func tasksOf(spec map[string][]int32) taskSet { return taskSetOf(spec) }

func TestAssignStreamsTasks(t *testing.T) {
	type want struct{ active, standby map[string]map[string][]int32 }
	mem := func(id, process string, prevActive, prevStandby map[string][]int32) streamsAssignMember {
		return streamsAssignMember{id: id, process: process,
			prev: streamsTasks{active: tasksOf(prevActive), standby: tasksOf(prevStandby), warmup: taskSet{}}}
	}
	for _, tc := range []struct {
		name string
		in   streamsAssignInput
		want want
	}{
		{
			name: "one member takes every task",
			in:   streamsAssignInput{tasks: map[string]int32{"0": 3, "1": 1}, members: []streamsAssignMember{mem("a", "p1", nil, nil)}},
			want: want{active: map[string]map[string][]int32{"a": {"0": {0, 1, 2}, "1": {0}}}},
		},
		{
			name: "two new members split the tasks",
			in: streamsAssignInput{tasks: map[string]int32{"0": 4},
				members: []streamsAssignMember{mem("b", "p2", nil, nil), mem("a", "p1", nil, nil)}},
			want: want{active: map[string]map[string][]int32{"a": {"0": {0, 2}}, "b": {"0": {1, 3}}}},
		},
		{
			name: "a joining member takes only what balance needs from the sticky owner",
			in: streamsAssignInput{tasks: map[string]int32{"0": 4}, members: []streamsAssignMember{
				mem("a", "p1", map[string][]int32{"0": {0, 1, 2, 3}}, nil), mem("b", "p2", nil, nil)}},
			want: want{active: map[string]map[string][]int32{"a": {"0": {0, 1}}, "b": {"0": {2, 3}}}},
		},
		{
			name: "the survivor keeps its tasks and takes the leaver's",
			in: streamsAssignInput{tasks: map[string]int32{"0": 4}, members: []streamsAssignMember{
				mem("b", "p2", map[string][]int32{"0": {1, 3}}, nil)}},
			want: want{active: map[string]map[string][]int32{"b": {"0": {0, 1, 2, 3}}}},
		},
		{
			name: "balance wins over stickiness: three members, uneven previous",
			in: streamsAssignInput{tasks: map[string]int32{"0": 6}, members: []streamsAssignMember{
				mem("a", "p1", map[string][]int32{"0": {0, 1, 2}}, nil),
				mem("b", "p2", map[string][]int32{"0": {3, 4, 5}}, nil),
				mem("c", "p3", nil, nil)}},
			want: want{active: map[string]map[string][]int32{"a": {"0": {0, 1}}, "b": {"0": {3, 4}}, "c": {"0": {2, 5}}}},
		},
		{
			name: "a previous standby becomes active where the active owner left",
			in: streamsAssignInput{tasks: map[string]int32{"0": 2}, members: []streamsAssignMember{
				mem("a", "p1", map[string][]int32{"0": {0}}, nil),
				mem("c", "p3", nil, map[string][]int32{"0": {1}}),
				mem("d", "p4", nil, nil)}},
			want: want{active: map[string]map[string][]int32{"a": {"0": {0}}, "c": {"0": {1}}, "d": {}}},
		},
		{
			name: "standbys go to other processes, sticky then least loaded",
			in: streamsAssignInput{tasks: map[string]int32{"0": 2}, standbyReplicas: 1, members: []streamsAssignMember{
				mem("a", "p1", map[string][]int32{"0": {0}}, nil),
				mem("b", "p2", map[string][]int32{"0": {1}}, nil),
				mem("c", "p3", nil, map[string][]int32{"0": {1}})}},
			want: want{
				active:  map[string]map[string][]int32{"a": {"0": {0}}, "b": {"0": {1}}, "c": {}},
				standby: map[string]map[string][]int32{"a": {}, "b": {}, "c": {"0": {0, 1}}},
			},
		},
		{
			name: "no standby on the active task's process, none when processes run out",
			in: streamsAssignInput{tasks: map[string]int32{"0": 2}, standbyReplicas: 2, members: []streamsAssignMember{
				mem("a1", "p1", nil, nil), mem("a2", "p1", nil, nil), mem("b", "p2", nil, nil)}},
			want: want{
				active:  map[string]map[string][]int32{"a1": {"0": {0}}, "a2": {"0": {1}}, "b": {}},
				standby: map[string]map[string][]int32{"a1": {}, "a2": {}, "b": {"0": {0, 1}}},
			},
		},
		{
			name: "more members than tasks",
			in: streamsAssignInput{tasks: map[string]int32{"0": 1}, members: []streamsAssignMember{
				mem("a", "p1", nil, nil), mem("b", "p2", map[string][]int32{"0": {0}}, nil)}},
			want: want{active: map[string]map[string][]int32{"a": {}, "b": {"0": {0}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := assignStreamsTasks(tc.in)
			for id, a := range got {
				if w := tc.want.active[id]; !reflect.DeepEqual(a.active.sorted(), nonNil(w)) {
					t.Errorf("%s active = %v, want %v", id, a.active.sorted(), w)
				}
				if w := tc.want.standby[id]; !reflect.DeepEqual(a.standby.sorted(), nonNil(w)) {
					t.Errorf("%s standby = %v, want %v", id, a.standby.sorted(), w)
				}
				if len(a.warmup) != 0 {
					t.Errorf("%s warmup = %v, want none", id, a.warmup.sorted())
				}
			}
			if len(got) != len(tc.in.members) {
				t.Errorf("got %d members, want %d", len(got), len(tc.in.members))
			}
		})
	}
}

func nonNil(m map[string][]int32) map[string][]int32 {
	if m == nil {
		return map[string][]int32{}
	}
	return m
}

// TestAssignStreamsTasksInvariants: every task has exactly one active owner
// and members differ by at most one active task, for many shapes.
func TestAssignStreamsTasksInvariants(t *testing.T) {
	for members := 1; members <= 7; members++ {
		for parts := int32(0); parts <= 13; parts++ {
			in := streamsAssignInput{tasks: map[string]int32{"0": parts, "1": parts / 2}, standbyReplicas: 1}
			for i := 0; i < members; i++ {
				prev := newStreamsTasks()
				if i%2 == 0 && parts > 0 {
					prev.active[streamsTask{"0", int32(i) % parts}] = true
				}
				in.members = append(in.members, streamsAssignMember{id: string(rune('a' + i)), process: string(rune('p' + i%3)), prev: prev})
			}
			got := assignStreamsTasks(in)
			owners := map[streamsTask]int{}
			lo, hi := 1<<30, -1
			for _, a := range got {
				for tk := range a.active {
					owners[tk]++
				}
				lo, hi = min(lo, len(a.active)), max(hi, len(a.active))
			}
			total := int(parts + parts/2)
			if len(owners) != total || hi-lo > 1 {
				t.Fatalf("%d members, %d tasks: %d tasks owned, loads %d..%d", members, total, len(owners), lo, hi)
			}
			for tk, n := range owners {
				if n != 1 {
					t.Fatalf("task %v has %d active owners", tk, n)
				}
			}
		}
	}
}
