package group

import (
	"fmt"
	"testing"
)

// checkBalanced fails unless every subscribed partition has exactly one
// owner among its subscribers and, for members with the same subscription,
// counts differ by at most one.
func checkBalanced(t *testing.T, in assignInput, out assignment) { checkAssignment(t, in, out, true) }

// checkAssignment checks ownership and coverage, and the balance when asked.
func checkAssignment(t *testing.T, in assignInput, out assignment, balanced bool) {
	t.Helper()
	owners := map[topicPart]string{}
	for m, ts := range out {
		for topic, ps := range ts {
			if !contains(in.subscribed[m], topic) {
				t.Fatalf("%s got %s without subscribing", m, topic)
			}
			for _, p := range ps {
				tp := topicPart{topic, p}
				if o, dup := owners[tp]; dup {
					t.Fatalf("%v owned by %s and %s", tp, o, m)
				}
				owners[tp] = m
			}
		}
	}
	for topic, n := range in.partitions {
		for p := int32(0); p < n; p++ {
			if owners[topicPart{topic, p}] == "" {
				t.Fatalf("%s-%d unassigned: %v", topic, p, out)
			}
		}
	}
	if !balanced {
		return
	}
	count := func(m string) int {
		n := 0
		for _, ps := range out[m] {
			n += len(ps)
		}
		return n
	}
	for _, a := range in.members {
		for _, b := range in.members {
			if fmt.Sprint(in.subscribed[a]) == fmt.Sprint(in.subscribed[b]) && count(a) > count(b)+1 {
				t.Fatalf("unbalanced: %s has %d, %s has %d: %v", a, count(a), b, count(b), out)
			}
		}
	}
}

func TestAssignors(t *testing.T) {
	same := func(members []string, topics ...string) map[string][]string {
		m := map[string][]string{}
		for _, id := range members {
			m[id] = topics
		}
		return m
	}
	for _, tc := range []struct {
		name string
		in   assignInput
	}{
		{"three members twelve partitions", assignInput{members: []string{"a", "b", "c"},
			subscribed: same([]string{"a", "b", "c"}, "t"), partitions: map[string]int32{"t": 12}}},
		{"more members than partitions", assignInput{members: []string{"a", "b", "c"},
			subscribed: same([]string{"a", "b", "c"}, "t"), partitions: map[string]int32{"t": 2}}},
		{"two topics, uneven", assignInput{members: []string{"a", "b"},
			subscribed: same([]string{"a", "b"}, "t", "u"), partitions: map[string]int32{"t": 3, "u": 5}}},
		{"different subscriptions", assignInput{members: []string{"a", "b", "c"},
			subscribed: map[string][]string{"a": {"t"}, "b": {"t", "u"}, "c": {"u"}}, partitions: map[string]int32{"t": 4, "u": 4}}},
	} {
		for _, name := range []string{AssignorUniform, AssignorRange} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				// Range balances each topic on its own, not members overall.
				checkAssignment(t, tc.in, assign(name, tc.in), name == AssignorUniform || len(tc.in.partitions) == 1)
			})
		}
	}
}

func TestRangeAssignsContiguousRanges(t *testing.T) {
	out := assignRange(assignInput{members: []string{"a", "b", "c"},
		subscribed: map[string][]string{"a": {"t"}, "b": {"t"}, "c": {"t"}}, partitions: map[string]int32{"t": 7}})
	want := map[string]string{"a": "[0 1 2]", "b": "[3 4]", "c": "[5 6]"}
	for m, w := range want {
		if got := fmt.Sprint(out[m]["t"]); got != w {
			t.Fatalf("%s = %s, want %s", m, got, w)
		}
	}
}

func TestUniformIsSticky(t *testing.T) {
	in := assignInput{members: []string{"a", "b", "c"}, subscribed: map[string][]string{"a": {"t"}, "b": {"t"}, "c": {"t"}},
		partitions: map[string]int32{"t": 12}}
	first := assignUniform(in)
	// c leaves: a and b keep all they had and split c's four.
	in2 := assignInput{members: []string{"a", "b"}, subscribed: map[string][]string{"a": {"t"}, "b": {"t"}},
		partitions: map[string]int32{"t": 12}, previous: first}
	second := assignUniform(in2)
	checkBalanced(t, in2, second)
	for _, m := range []string{"a", "b"} {
		kept := setOf(second[m])
		for tp := range setOf(first[m]) {
			if !kept[tp] {
				t.Fatalf("%s lost %v: %v -> %v", m, tp, first[m], second[m])
			}
		}
	}
	// c comes back: the others give up only what it needs.
	in3 := in
	in3.previous = second
	third := assignUniform(in3)
	checkBalanced(t, in3, third)
	moved := 0
	for _, m := range []string{"a", "b"} {
		now := setOf(third[m])
		for tp := range setOf(second[m]) {
			if !now[tp] {
				moved++
			}
		}
	}
	if moved != 4 {
		t.Fatalf("%d partitions moved when a member joined, want 4", moved)
	}
}
