package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestValidateTopicName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"orders", true},
		{"a.b_c-D9", true},
		{strings.Repeat("x", 249), true},
		{"", false},
		{".", false},
		{"..", false},
		{"...", true},
		{strings.Repeat("x", 250), false},
		{"has space", false},
		{"slash/name", false},
		{"ünicode", false},
		{"tab\t", false},
	}
	for _, tc := range tests {
		err := ValidateTopicName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateTopicName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidTopic) {
			t.Errorf("ValidateTopicName(%q) error %v does not wrap ErrInvalidTopic", tc.name, err)
		}
	}
}

func TestCreateTopics(t *testing.T) {
	c := newCluster(t, 3)
	ctx := context.Background()
	mustCreate(t, c, CreateTopic{Name: "existing", NumPartitions: 1, ReplicationFactor: 1},
		CreateTopic{Name: "dotted.name", NumPartitions: 1, ReplicationFactor: 1})

	tests := []struct {
		name    string
		req     CreateTopic
		wantErr error
		wantP   int32
		wantRF  int16
	}{
		{"defaults", CreateTopic{Name: "d", NumPartitions: -1, ReplicationFactor: -1}, nil, 1, 1},
		{"explicit", CreateTopic{Name: "e", NumPartitions: 6, ReplicationFactor: 3}, nil, 6, 3},
		{"with configs", CreateTopic{Name: "cfg", NumPartitions: 1, ReplicationFactor: 1,
			Configs: map[string]string{"cleanup.policy": "compact", "retention.ms": "-1"}}, nil, 1, 1},
		{"manual", CreateTopic{Name: "m", NumPartitions: -1, ReplicationFactor: -1,
			Assignments: map[int32][]int32{0: {2, 3}, 1: {3, 1}}}, nil, 2, 2},
		{"internal", CreateTopic{Name: "__consumer_offsets", NumPartitions: 2, ReplicationFactor: 1}, nil, 2, 1},
		{"bad name", CreateTopic{Name: "no/slash", NumPartitions: 1, ReplicationFactor: 1}, ErrInvalidTopic, 0, 0},
		{"exists", CreateTopic{Name: "existing", NumPartitions: 1, ReplicationFactor: 1}, ErrTopicExists, 0, 0},
		{"collides", CreateTopic{Name: "dotted_name", NumPartitions: 1, ReplicationFactor: 1}, ErrInvalidTopic, 0, 0},
		{"zero partitions", CreateTopic{Name: "z", NumPartitions: 0, ReplicationFactor: 1}, ErrInvalidPartitions, 0, 0},
		{"negative partitions", CreateTopic{Name: "z", NumPartitions: -2, ReplicationFactor: 1}, ErrInvalidPartitions, 0, 0},
		{"zero rf", CreateTopic{Name: "z", NumPartitions: 1, ReplicationFactor: 0}, ErrInvalidReplicationFactor, 0, 0},
		{"rf above brokers", CreateTopic{Name: "z", NumPartitions: 1, ReplicationFactor: 4}, ErrInvalidReplicationFactor, 0, 0},
		{"unknown config", CreateTopic{Name: "z", NumPartitions: 1, ReplicationFactor: 1,
			Configs: map[string]string{"retention.mss": "1"}}, ErrInvalidConfig, 0, 0},
		{"invalid config", CreateTopic{Name: "z", NumPartitions: 1, ReplicationFactor: 1,
			Configs: map[string]string{"min.insync.replicas": "0"}}, ErrInvalidConfig, 0, 0},
		{"manual with count", CreateTopic{Name: "z", NumPartitions: 2, ReplicationFactor: -1,
			Assignments: map[int32][]int32{0: {1}}}, ErrInvalidRequest, 0, 0},
		{"manual with rf", CreateTopic{Name: "z", NumPartitions: -1, ReplicationFactor: 1,
			Assignments: map[int32][]int32{0: {1}}}, ErrInvalidRequest, 0, 0},
		{"manual gap", CreateTopic{Name: "z", NumPartitions: -1, ReplicationFactor: -1,
			Assignments: map[int32][]int32{0: {1}, 2: {2}}}, ErrInvalidReplicaAssignment, 0, 0},
		{"manual empty", CreateTopic{Name: "z", NumPartitions: -1, ReplicationFactor: -1,
			Assignments: map[int32][]int32{0: {}}}, ErrInvalidReplicaAssignment, 0, 0},
		{"manual duplicate broker", CreateTopic{Name: "z", NumPartitions: -1, ReplicationFactor: -1,
			Assignments: map[int32][]int32{0: {1, 1}}}, ErrInvalidReplicaAssignment, 0, 0},
		{"manual unknown broker", CreateTopic{Name: "z", NumPartitions: -1, ReplicationFactor: -1,
			Assignments: map[int32][]int32{0: {7}}}, ErrInvalidReplicaAssignment, 0, 0},
		{"manual uneven rf", CreateTopic{Name: "z", NumPartitions: -1, ReplicationFactor: -1,
			Assignments: map[int32][]int32{0: {1, 2}, 1: {3}}}, ErrInvalidReplicaAssignment, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := c.CreateTopics(ctx, []CreateTopic{tc.req}, false)
			if len(res) != 1 || res[0].Name != tc.req.Name {
				t.Fatalf("results %+v", res)
			}
			r := res[0]
			if tc.wantErr != nil {
				if !errors.Is(r.Err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", r.Err, tc.wantErr)
				}
				if !strings.HasPrefix(r.Err.Error(), "controller: ") {
					t.Errorf("error %q lacks the package prefix", r.Err)
				}
				if tc.wantErr != ErrTopicExists {
					if _, ok := c.Image().Topic(tc.req.Name); ok {
						t.Fatal("failed create left a topic behind")
					}
				}
				return
			}
			if r.Err != nil {
				t.Fatalf("unexpected error %v", r.Err)
			}
			if r.ID == uuid.Nil || r.ID.Version() != 4 {
				t.Errorf("topic id %s is not a random UUID", r.ID)
			}
			if r.NumPartitions != tc.wantP || r.ReplicationFactor != tc.wantRF {
				t.Errorf("result %d partitions rf %d, want %d rf %d", r.NumPartitions, r.ReplicationFactor, tc.wantP, tc.wantRF)
			}
			for k, v := range tc.req.Configs {
				if r.Configs[k] != v {
					t.Errorf("effective %s = %q, want %q", k, r.Configs[k], v)
				}
			}
			if r.Configs["segment.bytes"] != "1073741824" {
				t.Errorf("effective configs lack the broker default: %v", r.Configs)
			}
			top, ok := c.Image().Topic(tc.req.Name)
			if !ok || top.ID != r.ID || int32(len(top.Partitions)) != tc.wantP {
				t.Fatalf("image topic %+v", top)
			}
			if byID, _ := c.Image().TopicByID(r.ID); byID != top {
				t.Error("TopicsByID disagrees with Topics")
			}
			if top.Internal != (tc.req.Name == "__consumer_offsets") {
				t.Errorf("Internal = %v", top.Internal)
			}
			for i, p := range top.Partitions {
				if p.Index != int32(i) || p.Leader != p.Replicas[0] || p.LeaderEpoch != 0 || len(p.Replicas) != int(tc.wantRF) {
					t.Errorf("partition %+v", p)
				}
				if fmtInts(p.ISR) != fmtInts(p.Replicas) {
					t.Errorf("ISR %v != replicas %v", p.ISR, p.Replicas)
				}
			}
			if want := tc.req.Assignments; want != nil {
				for p, replicas := range want {
					if fmtInts(top.Partitions[p].Replicas) != fmtInts(replicas) {
						t.Errorf("partition %d replicas %v, want %v", p, top.Partitions[p].Replicas, replicas)
					}
				}
			}
			if got := c.Image().TopicConfig(tc.req.Name); len(got) != len(tc.req.Configs) {
				t.Errorf("explicit configs %v, want %v", got, tc.req.Configs)
			}
		})
	}
}

func fmtInts(v []int32) string { return fmt.Sprint(v) }

func TestCreateTopicsBatch(t *testing.T) {
	c := newCluster(t, 1)
	ctx := context.Background()
	res := c.CreateTopics(ctx, []CreateTopic{
		{Name: "dup", NumPartitions: 1, ReplicationFactor: 1},
		{Name: "ok1", NumPartitions: 1, ReplicationFactor: 1},
		{Name: "dup", NumPartitions: 1, ReplicationFactor: 1},
		{Name: "x.y", NumPartitions: 1, ReplicationFactor: 1},
		{Name: "x_y", NumPartitions: 1, ReplicationFactor: 1},
	}, false)
	wantErrs := []error{ErrInvalidRequest, nil, ErrInvalidRequest, nil, ErrInvalidTopic}
	for i, want := range wantErrs {
		if (want == nil) != (res[i].Err == nil) || (want != nil && !errors.Is(res[i].Err, want)) {
			t.Errorf("result %d (%s): %v, want %v", i, res[i].Name, res[i].Err, want)
		}
	}
	if _, ok := c.Image().Topic("dup"); ok {
		t.Error("a duplicated topic was created")
	}

	// validateOnly reports the plan without creating anything.
	before := c.Image().Offset
	res = c.CreateTopics(ctx, []CreateTopic{{Name: "dry", NumPartitions: 3, ReplicationFactor: 1}}, true)
	if res[0].Err != nil || res[0].NumPartitions != 3 || res[0].ID != uuid.Nil {
		t.Errorf("validateOnly result %+v", res[0])
	}
	if _, ok := c.Image().Topic("dry"); ok || c.Image().Offset != before {
		t.Error("validateOnly changed the image")
	}

	// Too many partitions in one request fails every topic.
	res = c.CreateTopics(ctx, []CreateTopic{
		{Name: "big1", NumPartitions: 6000, ReplicationFactor: 1},
		{Name: "big2", NumPartitions: 6000, ReplicationFactor: 1},
	}, false)
	for _, r := range res {
		if !errors.Is(r.Err, ErrPolicyViolation) {
			t.Errorf("%s: %v, want ErrPolicyViolation", r.Name, r.Err)
		}
	}
}

func TestCreateTopicsNeedsBrokers(t *testing.T) {
	c := newCluster(t, 0)
	res := c.CreateTopics(context.Background(), []CreateTopic{{Name: "t", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if !errors.Is(res[0].Err, ErrInvalidReplicationFactor) {
		t.Fatalf("err = %v, want ErrInvalidReplicationFactor", res[0].Err)
	}
}

func TestPlacementBalanced(t *testing.T) {
	c := newCluster(t, 3)
	mustCreate(t, c, CreateTopic{Name: "spread", NumPartitions: 6, ReplicationFactor: 3})
	top, _ := c.Image().Topic("spread")
	leaders := map[int32]int{}
	replicas := map[int32]int{}
	for _, p := range top.Partitions {
		leaders[p.Leader]++
		seen := map[int32]bool{}
		for _, r := range p.Replicas {
			if seen[r] {
				t.Fatalf("partition %d repeats broker %d: %v", p.Index, r, p.Replicas)
			}
			seen[r] = true
			replicas[r]++
		}
	}
	for id := int32(1); id <= 3; id++ {
		if leaders[id] != 2 || replicas[id] != 6 {
			t.Errorf("broker %d leads %d and holds %d replicas, want 2 and 6", id, leaders[id], replicas[id])
		}
	}
}

func TestPlaceReplicas(t *testing.T) {
	tests := []struct {
		brokers      []int32
		first, count int32
		rf           int
		start, shift int
		want         [][]int32
	}{
		{[]int32{1}, 0, 3, 1, 0, 0, [][]int32{{1}, {1}, {1}}},
		{[]int32{1, 2, 3}, 0, 3, 2, 0, 0, [][]int32{{1, 2}, {2, 3}, {3, 1}}},
		// After n partitions the follower shift grows by one.
		{[]int32{1, 2, 3}, 3, 3, 2, 0, 0, [][]int32{{1, 3}, {2, 1}, {3, 2}}},
		{[]int32{1, 2, 3}, 0, 2, 3, 1, 1, [][]int32{{2, 1, 3}, {3, 2, 1}}},
	}
	for i, tc := range tests {
		got := placeReplicas(tc.brokers, tc.first, tc.count, tc.rf, tc.start, tc.shift)
		if len(got) != len(tc.want) {
			t.Fatalf("case %d: %v", i, got)
		}
		for p := range got {
			if fmtInts(got[p]) != fmtInts(tc.want[p]) {
				t.Errorf("case %d partition %d: %v, want %v", i, p, got[p], tc.want[p])
			}
		}
	}
}

func TestDeleteTopics(t *testing.T) {
	c := newCluster(t, 1)
	ctx := context.Background()
	created := mustCreate(t, c,
		CreateTopic{Name: "a", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]string{"retention.ms": "5"}},
		CreateTopic{Name: "b", NumPartitions: 2, ReplicationFactor: 1},
		CreateTopic{Name: "c", NumPartitions: 1, ReplicationFactor: 1},
	)
	unknownID := uuid.New()
	res := c.DeleteTopics(ctx, []string{"a", "missing", "dupe", "dupe"}, []uuid.UUID{created[1].ID, unknownID, uuid.Nil})
	want := []error{nil, ErrUnknownTopic, ErrInvalidRequest, ErrInvalidRequest, nil, ErrUnknownTopicID, ErrInvalidRequest}
	for i, w := range want {
		if (w == nil) != (res[i].Err == nil) || (w != nil && !errors.Is(res[i].Err, w)) {
			t.Errorf("result %d: %v, want %v", i, res[i].Err, w)
		}
	}
	if !errors.Is(res[5].Err, ErrUnknownTopic) {
		t.Error("an unknown topic id error must also match ErrUnknownTopic")
	}
	if res[4].Name != "b" || res[0].ID != created[0].ID {
		t.Errorf("results do not name the deleted topics: %+v %+v", res[0], res[4])
	}
	im := c.Image()
	if _, ok := im.Topic("a"); ok {
		t.Error("a still exists")
	}
	if _, ok := im.TopicByID(created[1].ID); ok {
		t.Error("b still exists")
	}
	if _, ok := im.Configs[ConfigResource{ResourceTopic, "a"}]; ok {
		t.Error("a's configs survived its deletion")
	}
	if _, ok := im.Topic("c"); !ok {
		t.Error("c was deleted")
	}
	// Deleting by name and id together deletes once and reports both.
	res = c.DeleteTopics(ctx, []string{"c"}, []uuid.UUID{created[2].ID})
	if res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("name+id delete: %v, %v", res[0].Err, res[1].Err)
	}
	// A recreated topic gets a new id and no old configs.
	again := mustCreate(t, c, CreateTopic{Name: "a", NumPartitions: 1, ReplicationFactor: 1})
	if again[0].ID == created[0].ID {
		t.Error("recreated topic reused its id")
	}
	if len(c.Image().TopicConfig("a")) != 0 {
		t.Error("recreated topic inherited configs")
	}
}

func TestCreatePartitions(t *testing.T) {
	c := newCluster(t, 3)
	ctx := context.Background()
	created := mustCreate(t, c,
		CreateTopic{Name: "grow", NumPartitions: 2, ReplicationFactor: 2},
		CreateTopic{Name: "manual", NumPartitions: 1, ReplicationFactor: 2},
		CreateTopic{Name: "dry", NumPartitions: 1, ReplicationFactor: 1},
	)
	tests := []struct {
		name    string
		req     CreatePartitions
		wantErr error
	}{
		{"grow", CreatePartitions{Topic: "grow", Count: 5}, nil},
		{"manual", CreatePartitions{Topic: "manual", Count: 3, Assignments: [][]int32{{3, 1}, {2, 3}}}, nil},
		{"unknown", CreatePartitions{Topic: "nope", Count: 2}, ErrUnknownTopic},
		{"shrink", CreatePartitions{Topic: "grow", Count: 1}, ErrInvalidPartitions},
		{"same", CreatePartitions{Topic: "grow", Count: 5}, ErrInvalidPartitions},
		{"too few assignments", CreatePartitions{Topic: "manual", Count: 5, Assignments: [][]int32{{1, 2}}}, ErrInvalidReplicaAssignment},
		{"wrong rf", CreatePartitions{Topic: "manual", Count: 4, Assignments: [][]int32{{1}}}, ErrInvalidReplicaAssignment},
		{"unknown broker", CreatePartitions{Topic: "manual", Count: 4, Assignments: [][]int32{{1, 9}}}, ErrInvalidReplicaAssignment},
		{"policy", CreatePartitions{Topic: "grow", Count: 20000}, ErrPolicyViolation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := c.CreatePartitions(ctx, []CreatePartitions{tc.req}, false)[0]
			if tc.wantErr != nil {
				if !errors.Is(res.Err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", res.Err, tc.wantErr)
				}
				return
			}
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			top, _ := c.Image().Topic(tc.req.Topic)
			if int32(len(top.Partitions)) != tc.req.Count || res.NumPartitions != tc.req.Count || res.ID != top.ID {
				t.Fatalf("topic has %d partitions, result %+v", len(top.Partitions), res)
			}
			for i, p := range top.Partitions {
				if p.Index != int32(i) || len(p.Replicas) != 2 || p.Leader != p.Replicas[0] {
					t.Errorf("partition %+v", p)
				}
			}
			for k, a := range tc.req.Assignments {
				if got := top.Partitions[len(top.Partitions)-len(tc.req.Assignments)+k].Replicas; fmtInts(got) != fmtInts(a) {
					t.Errorf("new partition %d replicas %v, want %v", k, got, a)
				}
			}
		})
	}
	// The id survives growth; validateOnly changes nothing; duplicates fail.
	top, _ := c.Image().Topic("grow")
	if top.ID != created[0].ID {
		t.Error("topic id changed")
	}
	res := c.CreatePartitions(ctx, []CreatePartitions{{Topic: "dry", Count: 4}}, true)[0]
	if res.Err != nil || res.NumPartitions != 4 {
		t.Fatalf("validateOnly: %+v", res)
	}
	if top, _ := c.Image().Topic("dry"); len(top.Partitions) != 1 {
		t.Error("validateOnly grew the topic")
	}
	both := c.CreatePartitions(ctx, []CreatePartitions{{Topic: "dry", Count: 2}, {Topic: "dry", Count: 3}}, false)
	if !errors.Is(both[0].Err, ErrInvalidRequest) || !errors.Is(both[1].Err, ErrInvalidRequest) {
		t.Fatalf("duplicate topic: %v, %v", both[0].Err, both[1].Err)
	}
}
