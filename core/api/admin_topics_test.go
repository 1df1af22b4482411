package api_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// topicPartitions returns a topic's partition count from Metadata, or -1 if
// the topic is unknown.
func (e *adminEnv) topicPartitions(topic string) int {
	e.t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = adminStr(topic)
	req.Topics = append(req.Topics, rt)
	resp := e.request(nil, req).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return -1
	}
	return len(resp.Topics[0].Partitions)
}

func TestDeleteTopics(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.Topics.AutoCreate = false })
	byName := e.createTopic("by-name", 2, nil)
	byID := e.createTopic("by-id", 1, nil)
	kept := e.createTopic("kept", 1, nil)
	e.produce("by-name", 1, 3)
	var unknownID [16]byte
	unknownID[0] = 7

	named := func(name string) kmsg.DeleteTopicsRequestTopic {
		t := kmsg.NewDeleteTopicsRequestTopic()
		t.Topic = adminStr(name)
		return t
	}
	withID := func(id [16]byte) kmsg.DeleteTopicsRequestTopic {
		t := kmsg.NewDeleteTopicsRequestTopic()
		t.TopicID = id
		return t
	}
	both := named("kept")
	both.TopicID = unknownID

	type answer struct {
		name string // "" for a null name
		id   [16]byte
		err  *kerr.Error
	}
	tests := []struct {
		name    string
		version int16 // 0: the newest
		topics  []kmsg.DeleteTopicsRequestTopic
		names   []string // for versions before 6
		want    []answer
		gone    []string
	}{
		{name: "by name, before topic ids", version: 5, names: []string{"by-name", "never-was"},
			want: []answer{{"by-name", [16]byte{}, nil}, {"never-was", [16]byte{}, kerr.UnknownTopicOrPartition}},
			gone: []string{"by-name"}},
		{name: "by id", topics: []kmsg.DeleteTopicsRequestTopic{withID(byID.ID), withID(unknownID)},
			want: []answer{{"by-id", byID.ID, nil}, {"", unknownID, kerr.UnknownTopicID}},
			gone: []string{"by-id"}},
		{name: "a name and its own id", topics: []kmsg.DeleteTopicsRequestTopic{named("kept"), withID(kept.ID)},
			want: []answer{{"kept", kept.ID, kerr.InvalidRequest}}},
		{name: "malformed", topics: []kmsg.DeleteTopicsRequestTopic{withID([16]byte{}), both, named("kept"), named("kept")},
			want: []answer{
				{"", [16]byte{}, kerr.InvalidRequest},
				{"kept", unknownID, kerr.InvalidRequest},
				{"kept", [16]byte{}, kerr.InvalidRequest},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.Topics, req.TopicNames = tt.topics, tt.names
			cl := e.cl
			if tt.version != 0 {
				cl = e.clientAt(20, tt.version)
			}
			resp := e.request(cl, req).(*kmsg.DeleteTopicsResponse)
			if len(resp.Topics) != len(tt.want) {
				t.Fatalf("%d answers, want %d: %+v", len(resp.Topics), len(tt.want), resp.Topics)
			}
			for i, w := range tt.want {
				got := resp.Topics[i]
				name := ""
				if got.Topic != nil {
					name = *got.Topic
				}
				if name != w.name || (resp.Version >= 6 && got.TopicID != w.id) {
					t.Errorf("answer %d is for %q %x, want %q %x", i, name, got.TopicID, w.name, w.id)
				}
				adminWantCode(t, "delete "+w.name, got.ErrorCode, w.err)
				if w.err != nil && got.ErrorMessage == nil && resp.Version >= 5 {
					t.Errorf("answer %d has no error message", i)
				}
			}
			for _, g := range tt.gone {
				if n := e.topicPartitions(g); n != -1 {
					t.Errorf("topic %s still has %d partitions", g, n)
				}
			}
			if n := e.topicPartitions("kept"); n != 1 {
				t.Errorf("topic kept has %d partitions, want 1", n)
			}
		})
	}

	t.Run("name again after delete", func(t *testing.T) {
		again := e.createTopic("by-name", 1, nil)
		if again.ID == byName.ID {
			t.Fatalf("recreated topic kept the old id")
		}
		// The new topic starts empty: its old data went with the old id. A
		// fresh client, as the old one caches the old topic id.
		fresh := *e
		fresh.cl = e.client()
		if off := fresh.produce("by-name", 0, 1); off != 0 {
			t.Errorf("first record of the recreated topic at offset %d, want 0", off)
		}
	})
}

func TestCreatePartitions(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.Topics.AutoCreate = false })
	e.createTopic("grow", 1, nil)
	e.createTopic("other", 1, nil)
	topic := func(name string, count int32, assignment ...[]int32) kmsg.CreatePartitionsRequestTopic {
		t := kmsg.NewCreatePartitionsRequestTopic()
		t.Topic, t.Count = name, count
		for _, a := range assignment {
			ca := kmsg.NewCreatePartitionsRequestTopicAssignment()
			ca.Replicas = a
			t.Assignment = append(t.Assignment, ca)
		}
		return t
	}
	tests := []struct {
		name         string
		validateOnly bool
		topics       []kmsg.CreatePartitionsRequestTopic
		want         map[string]*kerr.Error
		mention      string
		partitions   int // of "grow" afterwards
	}{
		{"validate only", true, []kmsg.CreatePartitionsRequestTopic{topic("grow", 3)},
			map[string]*kerr.Error{"grow": nil}, "", 1},
		{"grow", false, []kmsg.CreatePartitionsRequestTopic{topic("grow", 3)},
			map[string]*kerr.Error{"grow": nil}, "", 3},
		{"same count", false, []kmsg.CreatePartitionsRequestTopic{topic("grow", 3)},
			map[string]*kerr.Error{"grow": kerr.InvalidPartitions}, "3", 3},
		{"fewer", false, []kmsg.CreatePartitionsRequestTopic{topic("grow", 2)},
			map[string]*kerr.Error{"grow": kerr.InvalidPartitions}, "", 3},
		{"unknown topic", false, []kmsg.CreatePartitionsRequestTopic{topic("missing", 2)},
			map[string]*kerr.Error{"missing": kerr.UnknownTopicOrPartition}, "", 3},
		{"listed twice", false, []kmsg.CreatePartitionsRequestTopic{topic("grow", 5), topic("grow", 6), topic("other", 2)},
			map[string]*kerr.Error{"grow": kerr.InvalidRequest, "other": nil}, "", 3},
		{"assignment to an unknown broker", false, []kmsg.CreatePartitionsRequestTopic{topic("grow", 4, []int32{9})},
			map[string]*kerr.Error{"grow": kerr.InvalidReplicaAssignment}, "9", 3},
		{"too few assignments", false, []kmsg.CreatePartitionsRequestTopic{topic("grow", 5, []int32{1})},
			map[string]*kerr.Error{"grow": kerr.InvalidReplicaAssignment}, "", 3},
		{"manual assignment", false, []kmsg.CreatePartitionsRequestTopic{topic("grow", 4, []int32{1})},
			map[string]*kerr.Error{"grow": nil}, "", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.Topics, req.ValidateOnly = tt.topics, tt.validateOnly
			resp := e.request(nil, req).(*kmsg.CreatePartitionsResponse)
			if len(resp.Topics) != len(tt.want) {
				t.Fatalf("%d answers, want %d: %+v", len(resp.Topics), len(tt.want), resp.Topics)
			}
			for _, got := range resp.Topics {
				w, ok := tt.want[got.Topic]
				if !ok {
					t.Fatalf("answer for unexpected topic %q", got.Topic)
				}
				adminWantCode(t, got.Topic, got.ErrorCode, w)
				if w != nil && (got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, tt.mention)) {
					t.Errorf("message %v does not mention %q", got.ErrorMessage, tt.mention)
				}
			}
			if n := e.topicPartitions("grow"); n != tt.partitions {
				t.Errorf("grow has %d partitions, want %d", n, tt.partitions)
			}
		})
	}

	t.Run("new partitions take records", func(t *testing.T) {
		for p := int32(0); p < 4; p++ {
			if off := e.produce("grow", p, 2); off != 1 {
				t.Errorf("partition %d: last offset %d, want 1", p, off)
			}
		}
	})

	t.Run("franz-go kadm", func(t *testing.T) {
		rs, err := e.adm.CreatePartitions(e.ctx(), 2, "other")
		if err != nil {
			t.Fatal(err)
		}
		if r := rs["other"]; r.Err != nil {
			t.Fatalf("create partitions: %v", r.Err)
		}
		if n := e.topicPartitions("other"); n != 4 {
			t.Errorf("other has %d partitions, want 4", n)
		}
	})
}
