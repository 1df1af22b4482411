package group

import (
	"errors"
	"reflect"
	"testing"
)

func TestConfigureTopology(t *testing.T) {
	topics := map[string]TopicInfo{"in6": {Partitions: 6}, "in3": {Partitions: 3}, "logs-a": {Partitions: 2}, "logs-b": {Partitions: 5}}
	ti := func(name string, parts int32) StreamsTopicInfo {
		return StreamsTopicInfo{Name: name, Partitions: parts}
	}
	for _, tc := range []struct {
		name     string
		topo     StreamsTopology
		tasks    map[string]int32
		create   map[string]int32
		statuses []int8
	}{
		{
			name: "repartition topics follow their writers through a chain",
			topo: StreamsTopology{Subtopologies: []StreamsSubtopology{
				{ID: "0", SourceTopics: []string{"in6"}, RepartitionSinkTopics: []string{"a"}},
				{ID: "1", RepartitionSourceTopics: []StreamsTopicInfo{ti("a", 0)}, RepartitionSinkTopics: []string{"b"},
					StateChangelogTopics: []StreamsTopicInfo{ti("s1-changelog", 0)}},
				{ID: "2", RepartitionSourceTopics: []StreamsTopicInfo{ti("b", 0)}},
			}},
			tasks:    map[string]int32{"0": 6, "1": 6, "2": 6},
			create:   map[string]int32{"a": 6, "b": 6, "s1-changelog": 6},
			statuses: []int8{StreamsStatusMissingInternalTopics},
		},
		{
			name: "an explicit repartition count wins",
			topo: StreamsTopology{Subtopologies: []StreamsSubtopology{
				{ID: "0", SourceTopics: []string{"in6"}, RepartitionSinkTopics: []string{"a"}},
				{ID: "1", RepartitionSourceTopics: []StreamsTopicInfo{ti("a", 2)}},
			}},
			tasks:    map[string]int32{"0": 6, "1": 2},
			create:   map[string]int32{"a": 2},
			statuses: []int8{StreamsStatusMissingInternalTopics},
		},
		{
			name: "regex sources count, the largest input sets the tasks",
			topo: StreamsTopology{Subtopologies: []StreamsSubtopology{
				{ID: "0", SourceTopicRegex: []string{"logs-.*"}, StateChangelogTopics: []StreamsTopicInfo{ti("c", 0)}},
			}},
			tasks:    map[string]int32{"0": 5},
			create:   map[string]int32{"c": 5},
			statuses: []int8{StreamsStatusMissingInternalTopics},
		},
		{
			name: "a copartitioned repartition topic takes the source topic's count",
			topo: StreamsTopology{Subtopologies: []StreamsSubtopology{
				{ID: "0", SourceTopics: []string{"in6"}, RepartitionSinkTopics: []string{"a"}},
				{ID: "1", SourceTopics: []string{"in3"}, RepartitionSourceTopics: []StreamsTopicInfo{ti("a", 0)},
					CopartitionGroups: []StreamsCopartitionGroup{{SourceTopics: []int16{0}, RepartitionSourceTopics: []int16{0}}}},
			}},
			tasks:    map[string]int32{"0": 6, "1": 3},
			create:   map[string]int32{"a": 3},
			statuses: []int8{StreamsStatusMissingInternalTopics},
		},
		{
			name: "copartitioned source topics that disagree",
			topo: StreamsTopology{Subtopologies: []StreamsSubtopology{
				{ID: "0", SourceTopics: []string{"in6", "in3"},
					CopartitionGroups: []StreamsCopartitionGroup{{SourceTopics: []int16{0, 1}}}},
			}},
			statuses: []int8{StreamsStatusIncorrectlyPartitionedTopics},
		},
		{
			name:     "missing source topics",
			topo:     StreamsTopology{Subtopologies: []StreamsSubtopology{{ID: "0", SourceTopics: []string{"nope", "in6"}}}},
			statuses: []int8{StreamsStatusMissingSourceTopics},
		},
		{
			name:  "ready when everything exists",
			topo:  StreamsTopology{Subtopologies: []StreamsSubtopology{{ID: "0", SourceTopics: []string{"in3"}}}},
			tasks: map[string]int32{"0": 3},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := validateTopology(&tc.topo); err != nil {
				t.Fatalf("validate: %v", err)
			}
			got := configureTopology(&tc.topo, topics)
			var codes []int8
			for _, s := range got.statuses {
				codes = append(codes, s.Code)
			}
			if !reflect.DeepEqual(codes, tc.statuses) {
				t.Fatalf("statuses = %+v, want codes %v", got.statuses, tc.statuses)
			}
			create := map[string]int32{}
			for _, c := range got.create {
				create[c.Name] = c.Partitions
			}
			if len(tc.create) == 0 && len(create) == 0 {
				create = tc.create
			}
			if !reflect.DeepEqual(create, tc.create) {
				t.Errorf("create = %v, want %v", create, tc.create)
			}
			// Tasks are known once nothing is missing; the derived counts
			// are checked through the topics to create otherwise.
			if got.ready() && !reflect.DeepEqual(got.tasks, tc.tasks) {
				t.Errorf("tasks = %v, want %v", got.tasks, tc.tasks)
			}
			if tc.statuses == nil && !got.ready() {
				t.Error("not ready")
			}
		})
	}
	// Once the internal topics exist with those counts, the tasks are as
	// derived.
	chain := StreamsTopology{Subtopologies: []StreamsSubtopology{
		{ID: "0", SourceTopics: []string{"in6"}, RepartitionSinkTopics: []string{"a"}},
		{ID: "1", RepartitionSourceTopics: []StreamsTopicInfo{ti("a", 2)}},
	}}
	withA := map[string]TopicInfo{"in6": {Partitions: 6}, "a": {Partitions: 2}}
	if got := configureTopology(&chain, withA); !got.ready() || !reflect.DeepEqual(got.tasks, map[string]int32{"0": 6, "1": 2}) {
		t.Fatalf("with the repartition topic: ready %v tasks %v statuses %+v", got.ready(), got.tasks, got.statuses)
	}
	// A copartition group index past its list is an invalid topology.
	bad := StreamsTopology{Subtopologies: []StreamsSubtopology{{ID: "0", SourceTopics: []string{"in6"},
		CopartitionGroups: []StreamsCopartitionGroup{{SourceTopics: []int16{3}}}}}}
	if err := validateTopology(&bad); !errors.Is(err, ErrStreamsInvalidTopology) {
		t.Fatalf("an out-of-range copartition index: %v, want STREAMS_INVALID_TOPOLOGY", err)
	}
}
