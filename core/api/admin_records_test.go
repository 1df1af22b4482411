package api_test

import (
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// earliest returns a partition's log start offset from ListOffsets.
func (e *adminEnv) earliest(topic string, partition int32) int64 {
	e.t.Helper()
	offs, err := e.adm.ListStartOffsets(e.ctx(), topic)
	if err != nil {
		e.t.Fatalf("list start offsets: %v", err)
	}
	o, ok := offs.Lookup(topic, partition)
	if !ok || o.Err != nil {
		e.t.Fatalf("start offset of %s-%d: %v", topic, partition, o.Err)
	}
	return o.Offset
}

func TestDeleteRecords(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.Topics.AutoCreate = false })
	e.createTopic("trim", 2, nil)
	e.createTopic("compacted", 1, map[string]*string{"cleanup.policy": adminStr("compact")})
	e.produce("trim", 0, 10)
	e.produce("compacted", 0, 2)

	tests := []struct {
		name      string
		topic     string
		partition int32
		offset    int64
		want      *kerr.Error
		low       int64 // the answer's low watermark
		start     int64 // trim-0's log start offset afterwards
	}{
		{"delete below 4", "trim", 0, 4, nil, 4, 4},
		{"below the start is a no-op", "trim", 0, 2, nil, 4, 4},
		{"past the high watermark", "trim", 0, 11, kerr.OffsetOutOfRange, -1, 4},
		{"negative", "trim", 0, -2, kerr.OffsetOutOfRange, -1, 4},
		{"up to the high watermark", "trim", 0, -1, nil, 10, 10},
		{"empty partition", "trim", 1, -1, nil, 0, 10},
		{"unknown partition", "trim", 5, 0, kerr.UnknownTopicOrPartition, -1, 10},
		{"unknown topic", "missing", 0, 0, kerr.UnknownTopicOrPartition, -1, 10},
		{"compacted topic", "compacted", 0, 1, kerr.PolicyViolation, -1, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrDeleteRecordsRequest()
			rt := kmsg.NewDeleteRecordsRequestTopic()
			rt.Topic = tt.topic
			rp := kmsg.NewDeleteRecordsRequestTopicPartition()
			rp.Partition, rp.Offset = tt.partition, tt.offset
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp := e.requestBroker(nil, req).(*kmsg.DeleteRecordsResponse)
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				t.Fatalf("answer shape %+v", resp.Topics)
			}
			got := resp.Topics[0].Partitions[0]
			adminWantCode(t, "delete records", got.ErrorCode, tt.want)
			if got.LowWatermark != tt.low {
				t.Errorf("low watermark %d, want %d", got.LowWatermark, tt.low)
			}
			if s := e.earliest("trim", 0); s != tt.start {
				t.Errorf("trim-0 starts at %d, want %d", s, tt.start)
			}
		})
	}

	t.Run("records after the deletion stay readable", func(t *testing.T) {
		if last := e.produce("trim", 0, 1); last != 10 {
			t.Fatalf("next record at %d, want 10", last)
		}
		rs, err := e.adm.DeleteRecords(e.ctx(), kadm.Offsets{"trim": {0: {Topic: "trim", Partition: 0, At: 10}}})
		if err != nil {
			t.Fatal(err)
		}
		r, ok := rs.Lookup("trim", 0)
		if !ok || r.Err != nil || r.LowWatermark != 10 {
			t.Fatalf("kadm delete records: %+v", r)
		}
		if end, start := e.latest("trim", 0), e.earliest("trim", 0); start != 10 || end != 11 {
			t.Errorf("trim-0 spans [%d, %d), want [10, 11)", start, end)
		}
	})
}

// latest returns a partition's high watermark from ListOffsets.
func (e *adminEnv) latest(topic string, partition int32) int64 {
	e.t.Helper()
	offs, err := e.adm.ListEndOffsets(e.ctx(), topic)
	if err != nil {
		e.t.Fatalf("list end offsets: %v", err)
	}
	o, ok := offs.Lookup(topic, partition)
	if !ok || o.Err != nil {
		e.t.Fatalf("end offset of %s-%d: %v", topic, partition, o.Err)
	}
	return o.Offset
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.Topics.AutoCreate = false })
	e.createTopic("epochs", 2, nil)
	e.produce("epochs", 0, 3)

	tests := []struct {
		name      string
		version   int16
		replica   int32
		topic     string
		partition int32
		current   int32
		epoch     int32
		want      *kerr.Error
		wantEpoch int32
		wantEnd   int64
	}{
		{"current epoch ends at the log end", 4, -1, "epochs", 0, -1, 0, nil, 0, 3},
		{"checked current epoch", 4, -1, "epochs", 0, 0, 0, nil, 0, 3},
		{"current epoch of an empty log", 4, -1, "epochs", 1, -1, 0, nil, 0, 0},
		{"future epoch", 4, -1, "epochs", 0, -1, 7, nil, -1, -1},
		{"undefined epoch", 4, -1, "epochs", 0, -1, -1, nil, -1, -1},
		{"client ahead of the leader", 4, -1, "epochs", 0, 3, 0, kerr.UnknownLeaderEpoch, -1, -1},
		{"debugging replica, v2", 2, -2, "epochs", 0, -1, 0, nil, 0, 3},
		{"follower id, v3", 3, 1, "epochs", 0, -1, 0, nil, 0, 3},
		{"unknown partition", 4, -1, "epochs", 9, -1, 0, kerr.UnknownTopicOrPartition, -1, -1},
		{"unknown topic", 4, -1, "missing", 0, -1, 0, kerr.UnknownTopicOrPartition, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrOffsetForLeaderEpochRequest()
			req.ReplicaID = tt.replica
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = tt.topic
			rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = tt.partition, tt.current, tt.epoch
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp := e.requestBroker(e.clientAt(23, tt.version), req).(*kmsg.OffsetForLeaderEpochResponse)
			if resp.Version != tt.version {
				t.Fatalf("answered at v%d, want v%d", resp.Version, tt.version)
			}
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				t.Fatalf("answer shape %+v", resp.Topics)
			}
			got := resp.Topics[0].Partitions[0]
			adminWantCode(t, "offset for leader epoch", got.ErrorCode, tt.want)
			if got.LeaderEpoch != tt.wantEpoch || got.EndOffset != tt.wantEnd {
				t.Errorf("epoch %d ends at %d, want epoch %d ending at %d", got.LeaderEpoch, got.EndOffset, tt.wantEpoch, tt.wantEnd)
			}
		})
	}

	t.Run("franz-go kadm", func(t *testing.T) {
		var req kadm.OffsetForLeaderEpochRequest
		req.Add("epochs", 0, 0)
		res, err := e.adm.OffsetForLeaderEpoch(e.ctx(), req)
		if err != nil {
			t.Fatal(err)
		}
		if r := res["epochs"][0]; r.Err != nil || r.LeaderEpoch != 0 || r.EndOffset != 3 {
			t.Errorf("kadm answer %+v, want epoch 0 ending at 3", r)
		}
	})
}

func TestDescribeLogDirs(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.Topics.AutoCreate = false })
	e.createTopic("dirs-a", 2, nil)
	e.createTopic("dirs-b", 1, nil)
	e.produce("dirs-a", 1, 4)
	dataDir, err := filepath.Abs(e.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}

	type part struct {
		topic     string
		partition int32
		nonEmpty  bool
	}
	all := []part{{"dirs-a", 0, false}, {"dirs-a", 1, true}, {"dirs-b", 0, false}}
	tests := []struct {
		name    string
		version int16
		topics  []kmsg.DescribeLogDirsRequestTopic // nil: every partition
		want    []part
		sizes   bool // v4+ reports the volume's bytes
	}{
		{"every partition", 5, nil, all, true},
		{"every partition, v1", 1, nil, all, false},
		{"named partitions", 4, []kmsg.DescribeLogDirsRequestTopic{
			{Topic: "dirs-a", Partitions: []int32{1, 7}},
			{Topic: "missing", Partitions: []int32{0}},
		}, []part{{"dirs-a", 1, true}}, true},
		{"no partitions", 4, []kmsg.DescribeLogDirsRequestTopic{}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrDescribeLogDirsRequest()
			req.Topics = tt.topics
			resp := e.requestBroker(e.clientAt(35, tt.version), req).(*kmsg.DescribeLogDirsResponse)
			if resp.Version != tt.version {
				t.Fatalf("answered at v%d, want v%d", resp.Version, tt.version)
			}
			adminWantCode(t, "describe log dirs", resp.ErrorCode, nil)
			if len(resp.Dirs) != 1 {
				t.Fatalf("%d dirs, want 1", len(resp.Dirs))
			}
			d := resp.Dirs[0]
			adminWantCode(t, "log dir", d.ErrorCode, nil)
			if d.Dir != dataDir {
				t.Errorf("dir %q, want %q", d.Dir, dataDir)
			}
			if tt.sizes && (d.TotalBytes <= 0 || d.UsableBytes < 0 || d.UsableBytes > d.TotalBytes) {
				t.Errorf("volume total %d usable %d", d.TotalBytes, d.UsableBytes)
			}
			if !tt.sizes && (d.TotalBytes != -1 || d.UsableBytes != -1) {
				t.Errorf("v%d carries volume bytes %d %d", tt.version, d.TotalBytes, d.UsableBytes)
			}
			var got []part
			for _, dt := range d.Topics {
				for _, dp := range dt.Partitions {
					got = append(got, part{dt.Topic, dp.Partition, dp.Size > 0})
					if dp.OffsetLag != 0 || dp.IsFuture {
						t.Errorf("%s-%d: lag %d future %v", dt.Topic, dp.Partition, dp.OffsetLag, dp.IsFuture)
					}
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("partitions %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("partitions %v, want %v", got, tt.want)
					break
				}
			}
		})
	}

	t.Run("franz-go kadm", func(t *testing.T) {
		dirs, err := e.adm.DescribeAllLogDirs(e.ctx(), nil)
		if err != nil {
			t.Fatal(err)
		}
		sorted := dirs.Sorted()
		if len(sorted) != 1 || sorted[0].Err != nil || sorted[0].Dir != dataDir || sorted[0].Size() <= 0 {
			t.Fatalf("kadm log dirs %+v", sorted)
		}
	})
}
