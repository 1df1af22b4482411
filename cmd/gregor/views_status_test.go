package main

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/gregorbroker/gregor/mirror"
)

func TestTxnDescribeView(t *testing.T) {
	described := kadm.DescribedTransactions{
		"pay": {Coordinator: 1, TxnID: "pay", State: "Ongoing", TimeoutMillis: 60000, StartTimestamp: 1700000000000,
			ProducerID: 7, ProducerEpoch: 2, Topics: kadm.TopicsSet{"orders": {1: {}, 0: {}}}},
		"bad":  {TxnID: "bad", Err: errors.New("TRANSACTIONAL_ID_NOT_FOUND")},
		"idle": {Coordinator: 1, TxnID: "idle", State: "Empty", ProducerID: 8, StartTimestamp: -1},
	}
	got := txnDescribeView([]string{"pay", "bad", "idle", "gone"}, described)
	start := int64(1700000000000)
	want := []txnView{
		{TransactionalID: "pay", Coordinator: 1, State: "Ongoing", ProducerID: 7, ProducerEpoch: 2, TimeoutMs: 60000,
			StartTimestamp: &start, Partitions: []txnPartitionView{{"orders", 0}, {"orders", 1}}},
		{TransactionalID: "bad", Partitions: []txnPartitionView{}, Error: "TRANSACTIONAL_ID_NOT_FOUND"},
		{TransactionalID: "idle", Coordinator: 1, State: "Empty", ProducerID: 8, Partitions: []txnPartitionView{}},
		{TransactionalID: "gone", Partitions: []txnPartitionView{}, Error: "no answer"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestMirrorStatusView(t *testing.T) {
	tests := []struct {
		name string
		st   mirror.ClusterStatus
		want mirrorView
	}{
		{name: "empty lists are not null",
			st:   mirror.ClusterStatus{Status: mirror.Status{Name: "a->b", Source: "a", Target: "b", Mode: "link"}},
			want: mirrorView{Name: "a->b", Source: "a", Target: "b", Mode: "link", Partitions: []mirrorPartitionView{}, Promoted: []string{}, Skipped: []mirrorSkippedView{}}},
		{name: "full",
			st: mirror.ClusterStatus{Status: mirror.Status{Name: "a->b", Mode: "copy", LastError: "x",
				Skipped:    map[string]string{"z": "internal", "m": "excluded"},
				Partitions: []mirror.PartitionStatus{{Topic: "t", Partition: 1, TargetTopic: "a.t", Position: 3, SourceEnd: 5, Lag: 2, State: "mirroring"}}},
				LastHeartbeat: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Promoted: []string{"a.u"}},
			want: mirrorView{Name: "a->b", Mode: "copy", LastError: "x", Lag: 2, LastHeartbeat: ptr("2026-01-02T03:04:05Z"),
				Partitions: []mirrorPartitionView{{Topic: "t", Partition: 1, TargetTopic: "a.t", Position: 3, SourceEnd: 5, Lag: 2, State: "mirroring"}},
				Promoted:   []string{"a.u"}, Skipped: []mirrorSkippedView{{"m", "excluded"}, {"z", "internal"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mirrorStatusView(tt.st); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
