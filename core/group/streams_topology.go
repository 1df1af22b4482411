package group

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Errors of streams groups (KIP-1071).
var (
	ErrStreamsInvalidTopology      = errors.New("group: invalid streams topology")
	ErrStreamsInvalidTopologyEpoch = errors.New("group: invalid streams topology epoch")
)

// StreamsTopicInfo is an internal topic of a topology: a changelog or a
// repartition topic, with the partitions (0: derived) and the replication
// factor (0: the broker's default) the application asks for.
type StreamsTopicInfo struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Configs           map[string]string
}

// StreamsCopartitionGroup lists, by index into its subtopology's lists, the
// source topics that must have the same number of partitions.
type StreamsCopartitionGroup struct {
	SourceTopics            []int16
	SourceTopicRegex        []int16
	RepartitionSourceTopics []int16
}

// StreamsSubtopology is one subtopology as the application describes it.
type StreamsSubtopology struct {
	ID                      string
	SourceTopics            []string
	SourceTopicRegex        []string
	StateChangelogTopics    []StreamsTopicInfo
	RepartitionSinkTopics   []string
	RepartitionSourceTopics []StreamsTopicInfo
	CopartitionGroups       []StreamsCopartitionGroup
}

// StreamsTopology is a streams application's topology.
type StreamsTopology struct {
	Epoch         int32
	Subtopologies []StreamsSubtopology
}

// Status codes of StreamsGroupHeartbeat.
const (
	StreamsStatusStaleTopology                int8 = 0
	StreamsStatusMissingSourceTopics          int8 = 1
	StreamsStatusIncorrectlyPartitionedTopics int8 = 2
	StreamsStatusMissingInternalTopics        int8 = 3
	StreamsStatusShutdownApplication          int8 = 4
)

// StreamsStatus is one status of a StreamsGroupHeartbeat answer.
type StreamsStatus struct {
	Code   int8
	Detail string
}

// validateTopology is Kafka's check of a topology sent with a join.
func validateTopology(t *StreamsTopology) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrStreamsInvalidTopology}, args...)...)
	}
	ids := map[string]bool{}
	for _, st := range t.Subtopologies {
		if ids[st.ID] {
			return bad("duplicate subtopology id %s", st.ID)
		}
		ids[st.ID] = true
		for _, re := range st.SourceTopicRegex {
			if _, err := regexp.Compile(re); err != nil {
				return bad("subtopology %s: source topic regex %q: %v", st.ID, re, err)
			}
		}
		for _, ti := range append(append([]StreamsTopicInfo(nil), st.StateChangelogTopics...), st.RepartitionSourceTopics...) {
			if ti.Name == "" {
				return bad("subtopology %s: an internal topic has no name", st.ID)
			}
		}
		for _, g := range st.CopartitionGroups {
			for _, ix := range g.SourceTopics {
				if int(ix) < 0 || int(ix) >= len(st.SourceTopics) {
					return bad("subtopology %s: copartition group source topic index %d out of range", st.ID, ix)
				}
			}
			for _, ix := range g.SourceTopicRegex {
				if int(ix) < 0 || int(ix) >= len(st.SourceTopicRegex) {
					return bad("subtopology %s: copartition group source topic regex index %d out of range", st.ID, ix)
				}
			}
			for _, ix := range g.RepartitionSourceTopics {
				if int(ix) < 0 || int(ix) >= len(st.RepartitionSourceTopics) {
					return bad("subtopology %s: copartition group repartition source topic index %d out of range", st.ID, ix)
				}
			}
		}
	}
	return nil
}

// configuredTopology is a topology set against the topics that exist: the
// number of tasks of each subtopology, the internal topics to create, and
// the statuses that keep it from being ready.
type configuredTopology struct {
	tasks    map[string]int32 // subtopology id -> number of tasks; nil when not ready
	create   []StreamsTopicInfo
	statuses []StreamsStatus
	// sources is every subtopology's input topics, by id, for the
	// partitions by endpoint of Interactive Queries.
	sources map[string][]string
	// internal is the partition count of every internal topic.
	internal map[string]int32
}

func (c configuredTopology) ready() bool { return c.tasks != nil }

// configureTopology derives partition counts as Kafka's coordinator does:
// source topics must exist; a repartition topic without a count gets the
// largest count of the inputs of the subtopology that writes it;
// copartitioned topics must agree (repartition topics among them follow
// the source topics); a subtopology has as many tasks as its largest input
// and its changelogs as many partitions. Internal topics that are missing
// are to be created; those that exist must have the derived counts.
func configureTopology(t *StreamsTopology, topics map[string]TopicInfo) configuredTopology {
	var out configuredTopology
	if t == nil {
		return out
	}
	var missing []string
	resolved := map[string][]string{} // subtopology -> source topics (names and regex matches)
	for _, st := range t.Subtopologies {
		srcs := append([]string(nil), st.SourceTopics...)
		for _, re := range st.SourceTopicRegex {
			rx, err := regexp.Compile("^(?:" + re + ")$")
			if err != nil {
				continue
			}
			for name := range topics {
				if rx.MatchString(name) && !contains(srcs, name) {
					srcs = append(srcs, name)
				}
			}
		}
		sort.Strings(srcs)
		resolved[st.ID] = srcs
		for _, s := range st.SourceTopics {
			if _, ok := topics[s]; !ok && !contains(missing, s) {
				missing = append(missing, s)
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		out.statuses = append(out.statuses, StreamsStatus{StreamsStatusMissingSourceTopics,
			fmt.Sprintf("Source topics %s are missing.", strings.Join(missing, ", "))})
		return out
	}
	counts := map[string]int32{}
	for name, ti := range topics {
		counts[name] = ti.Partitions
	}
	repart := map[string]int32{} // repartition topic -> count, 0 until known
	for _, st := range t.Subtopologies {
		for _, ti := range st.RepartitionSourceTopics {
			repart[ti.Name] = max(repart[ti.Name], ti.Partitions)
		}
	}
	// Copartitioned repartition topics follow the source topics.
	for _, st := range t.Subtopologies {
		for _, g := range st.CopartitionGroups {
			var srcCount int32
			var names []string
			for _, ix := range g.SourceTopics {
				n := st.SourceTopics[ix]
				names = append(names, n)
				if srcCount != 0 && counts[n] != srcCount {
					out.statuses = append(out.statuses, StreamsStatus{StreamsStatusIncorrectlyPartitionedTopics,
						fmt.Sprintf("Following topics do not have the same number of partitions: [%s]", strings.Join(names, ", "))})
					return out
				}
				srcCount = counts[n]
			}
			for _, ix := range g.RepartitionSourceTopics {
				n := st.RepartitionSourceTopics[ix].Name
				if srcCount > 0 && repart[n] == 0 {
					repart[n] = srcCount
				}
			}
		}
	}
	inputs := func(st StreamsSubtopology) (int32, bool) {
		var n int32
		for _, s := range resolved[st.ID] {
			n = max(n, counts[s])
		}
		for _, ti := range st.RepartitionSourceTopics {
			if repart[ti.Name] == 0 {
				return 0, false
			}
			n = max(n, repart[ti.Name])
		}
		return n, true
	}
	for changed := true; changed; {
		changed = false
		for _, st := range t.Subtopologies {
			n, ok := inputs(st)
			if !ok || n == 0 {
				continue
			}
			for _, sink := range st.RepartitionSinkTopics {
				if _, isRepart := repart[sink]; isRepart && repart[sink] == 0 {
					repart[sink], changed = n, true
				}
			}
		}
	}
	out.tasks = map[string]int32{}
	out.sources = map[string][]string{}
	var missingInternal []string
	out.internal = map[string]int32{}
	check := func(ti StreamsTopicInfo, want int32) bool {
		out.internal[ti.Name] = want
		if have, ok := topics[ti.Name]; ok {
			if have.Partitions != want {
				out.statuses = append(out.statuses, StreamsStatus{StreamsStatusIncorrectlyPartitionedTopics,
					fmt.Sprintf("Existing internal topic %s has invalid number of partitions: expected: %d; actual: %d.", ti.Name, want, have.Partitions)})
				return false
			}
			return true
		}
		if contains(missingInternal, ti.Name) {
			return true
		}
		ti.Partitions = want
		out.create = append(out.create, ti)
		missingInternal = append(missingInternal, ti.Name)
		return true
	}
	for _, st := range t.Subtopologies {
		n, ok := inputs(st)
		if !ok {
			out.tasks = nil
			out.statuses = append(out.statuses, StreamsStatus{StreamsStatusIncorrectlyPartitionedTopics,
				fmt.Sprintf("The number of partitions of the repartition source topics of subtopology %s cannot be derived.", st.ID)})
			return out
		}
		out.tasks[st.ID] = n
		srcs := append([]string(nil), resolved[st.ID]...)
		for _, ti := range st.RepartitionSourceTopics {
			if !check(ti, repart[ti.Name]) {
				out.tasks = nil
				return out
			}
			srcs = append(srcs, ti.Name)
		}
		for _, ti := range st.StateChangelogTopics {
			if !check(ti, n) {
				out.tasks = nil
				return out
			}
		}
		out.sources[st.ID] = srcs
	}
	if len(missingInternal) > 0 {
		sort.Strings(missingInternal)
		out.tasks = nil
		out.statuses = append(out.statuses, StreamsStatus{StreamsStatusMissingInternalTopics,
			fmt.Sprintf("Internal topics are missing: [%s]", strings.Join(missingInternal, ", "))})
	}
	return out
}
