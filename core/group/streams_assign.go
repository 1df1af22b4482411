package group

import (
	"sort"
)

// streamsTask is a task of a streams group (KIP-1071): one partition of a
// subtopology.
type streamsTask struct {
	subtopology string
	partition   int32
}

// taskSet is a set of tasks.
type taskSet map[streamsTask]bool

func (s taskSet) equal(o taskSet) bool {
	if len(s) != len(o) {
		return false
	}
	for t := range s {
		if !o[t] {
			return false
		}
	}
	return true
}

func (s taskSet) clone() taskSet {
	out := make(taskSet, len(s))
	for t := range s {
		out[t] = true
	}
	return out
}

// sorted is the set by subtopology, partitions ascending.
func (s taskSet) sorted() map[string][]int32 {
	out := map[string][]int32{}
	for t := range s {
		out[t.subtopology] = append(out[t.subtopology], t.partition)
	}
	for k := range out {
		sort.Slice(out[k], func(i, j int) bool { return out[k][i] < out[k][j] })
	}
	return out
}

func taskSetOf(m map[string][]int32) taskSet {
	s := taskSet{}
	for st, ps := range m {
		for _, p := range ps {
			s[streamsTask{st, p}] = true
		}
	}
	return s
}

// streamsTasks is one member's tasks of each kind.
type streamsTasks struct {
	active, standby, warmup taskSet
}

func newStreamsTasks() streamsTasks {
	return streamsTasks{active: taskSet{}, standby: taskSet{}, warmup: taskSet{}}
}

func (t streamsTasks) clone() streamsTasks {
	return streamsTasks{active: t.active.clone(), standby: t.standby.clone(), warmup: t.warmup.clone()}
}

func (t streamsTasks) equal(o streamsTasks) bool {
	return t.active.equal(o.active) && t.standby.equal(o.standby) && t.warmup.equal(o.warmup)
}

// streamsAssignMember is what the assignor knows of a member: its process
// (a Kafka Streams instance may run several members) and what it was
// assigned before, for stickiness.
type streamsAssignMember struct {
	id      string
	process string
	prev    streamsTasks
}

// streamsAssignInput is the input of the streams task assignor.
type streamsAssignInput struct {
	// tasks is the number of tasks (partitions) of each subtopology.
	tasks           map[string]int32
	members         []streamsAssignMember
	standbyReplicas int
}

// assignStreamsTasks is the sticky task assignor of Kafka's streams group
// coordinator: every task gets exactly one active owner; active tasks are
// spread so that members differ by at most one, and a member keeps the
// tasks it had (active first, then those it kept a standby for) as far as
// the balance allows. Each task then gets up to standbyReplicas standbys, on
// processes other than the one running it active and each other, preferring
// members that had the task before, then the least loaded. It assigns no
// warm-up tasks: Kafka's sticky assignor does not either. The result is a
// pure function of the input.
func assignStreamsTasks(in streamsAssignInput) map[string]streamsTasks {
	out := make(map[string]streamsTasks, len(in.members))
	if len(in.members) == 0 {
		return out
	}
	members := append([]streamsAssignMember(nil), in.members...)
	sort.Slice(members, func(i, j int) bool { return members[i].id < members[j].id })
	for _, m := range members {
		out[m.id] = newStreamsTasks()
	}
	var tasks []streamsTask
	subs := make([]string, 0, len(in.tasks))
	for st := range in.tasks {
		subs = append(subs, st)
	}
	sort.Strings(subs)
	for _, st := range subs {
		for p := int32(0); p < in.tasks[st]; p++ {
			tasks = append(tasks, streamsTask{st, p})
		}
	}
	assignActiveTasks(tasks, members, out)
	assignStandbyTasks(tasks, members, in.standbyReplicas, out)
	return out
}

func assignActiveTasks(tasks []streamsTask, members []streamsAssignMember, out map[string]streamsTasks) {
	n, m := len(tasks), len(members)
	floor, extra := n/m, n%m // extra members may carry floor+1 tasks
	count := map[string]int{}
	owner := map[streamsTask]string{}
	give := func(t streamsTask, id string) {
		owner[t] = id
		out[id].active[t] = true
		count[id]++
	}
	// Stickiness in two passes: first each member keeps up to floor of its
	// previous tasks, then members with more take one extra while extra
	// slots are left, so the balance is never traded for stickiness.
	prevOwner := func(kind func(streamsTasks) taskSet) map[streamsTask]string {
		po := map[streamsTask]string{}
		for _, mb := range members {
			for t := range kind(mb.prev) {
				if _, ok := po[t]; !ok {
					po[t] = mb.id
				}
			}
		}
		return po
	}
	prevActive := prevOwner(func(t streamsTasks) taskSet { return t.active })
	prevStandby := prevOwner(func(t streamsTasks) taskSet { return t.standby })
	for _, po := range []map[streamsTask]string{prevActive, prevStandby} {
		for _, t := range tasks {
			if id, ok := po[t]; ok && owner[t] == "" && count[id] < floor {
				give(t, id)
			}
		}
	}
	for _, po := range []map[streamsTask]string{prevActive, prevStandby} {
		for _, t := range tasks {
			if id, ok := po[t]; ok && owner[t] == "" && count[id] == floor && extra > 0 {
				give(t, id)
				extra--
			}
		}
	}
	for _, t := range tasks {
		if owner[t] != "" {
			continue
		}
		best := ""
		for _, mb := range members {
			c := count[mb.id]
			if c > floor || (c == floor && extra == 0) {
				continue
			}
			if best == "" || c < count[best] {
				best = mb.id
			}
		}
		if count[best] == floor {
			extra--
		}
		give(t, best)
	}
}

func assignStandbyTasks(tasks []streamsTask, members []streamsAssignMember, replicas int, out map[string]streamsTasks) {
	if replicas <= 0 {
		return
	}
	load := map[string]int{}
	for id, a := range out {
		load[id] = len(a.active)
	}
	for _, t := range tasks {
		for r := 0; r < replicas; r++ {
			used := map[string]bool{}
			for _, mb := range members {
				if out[mb.id].active[t] || out[mb.id].standby[t] {
					used[mb.process] = true
				}
			}
			best := -1
			better := func(i int) bool {
				if best < 0 {
					return true
				}
				a, b := members[i], members[best]
				ha := a.prev.standby[t] || a.prev.active[t]
				hb := b.prev.standby[t] || b.prev.active[t]
				if ha != hb {
					return ha
				}
				return load[a.id] < load[b.id]
			}
			for i, mb := range members {
				if !used[mb.process] && better(i) {
					best = i
				}
			}
			if best < 0 {
				break // fewer processes than replicas: Kafka leaves the rest unassigned
			}
			id := members[best].id
			out[id].standby[t] = true
			load[id]++
		}
	}
}
