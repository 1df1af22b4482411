package api_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDeleteInternalTopics: __consumer_offsets and __transaction_state are
// refused by name (before and after topic ids) and by id, and stay.
func TestDeleteInternalTopics(t *testing.T) {
	e := startAdminBroker(t)
	// The first FindCoordinator of each kind creates its internal topic.
	for _, typ := range []int8{0, 1} {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType, req.CoordinatorKey = typ, "internal-delete"
		req.CoordinatorKeys = []string{"internal-delete"}
		e.request(nil, req)
	}
	md := kmsg.NewPtrMetadataRequest()
	ids := map[string][16]byte{}
	for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = adminStr(name)
		md.Topics = append(md.Topics, rt)
	}
	for _, mt := range e.request(nil, md).(*kmsg.MetadataResponse).Topics {
		if mt.ErrorCode != 0 || mt.Topic == nil || !mt.IsInternal {
			t.Fatalf("internal topic not created: %+v", mt)
		}
		ids[*mt.Topic] = mt.TopicID
	}
	e.createTopic("deletable", 1, nil)

	tests := []struct {
		name    string
		version int16
		byID    bool
		topic   string
		want    *kerr.Error
	}{
		{"offsets by name v1", 1, false, "__consumer_offsets", kerr.InvalidTopicException},
		{"transactions by name v5", 5, false, "__transaction_state", kerr.InvalidTopicException},
		{"offsets by id", 6, true, "__consumer_offsets", kerr.InvalidTopicException},
		{"transactions by id", 6, true, "__transaction_state", kerr.InvalidTopicException},
		{"a user topic is deleted", 6, false, "deletable", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.TimeoutMillis = 5000
			switch {
			case tt.version < 6:
				req.TopicNames = []string{tt.topic}
			case tt.byID:
				rt := kmsg.NewDeleteTopicsRequestTopic()
				rt.TopicID = ids[tt.topic]
				req.Topics = append(req.Topics, rt)
			default:
				rt := kmsg.NewDeleteTopicsRequestTopic()
				rt.Topic = adminStr(tt.topic)
				req.Topics = append(req.Topics, rt)
			}
			resp := e.request(e.clientAt(20, tt.version), req).(*kmsg.DeleteTopicsResponse)
			if len(resp.Topics) != 1 {
				t.Fatalf("%d answers, want 1", len(resp.Topics))
			}
			got := resp.Topics[0]
			adminWantCode(t, tt.topic, got.ErrorCode, tt.want)
			if got.Topic == nil || *got.Topic != tt.topic {
				t.Errorf("answer names %v, want %s", got.Topic, tt.topic)
			}
			if tt.want != nil && tt.version >= 5 && got.ErrorMessage == nil {
				t.Errorf("no error message")
			}
			if n := e.topicPartitions(tt.topic); (n == -1) != (tt.want == nil) {
				t.Errorf("%s has %d partitions after the delete", tt.topic, n)
			}
		})
	}
}
