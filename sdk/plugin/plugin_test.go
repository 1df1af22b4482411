package plugin

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
	"github.com/gregorbroker/gregor/sdk/retention"
)

func TestRecordsRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		records []partitioner.Record
	}{
		{"null key", []partitioner.Record{{Key: nil, Value: []byte("v")}}},
		{"empty key", []partitioner.Record{{Key: []byte{}, Value: []byte("v")}}},
		{"key and headers", []partitioner.Record{{Key: []byte("k"), Headers: []partitioner.Header{{Key: "region", Value: []byte("eu")}, {Key: "n"}}}}},
		{"several", []partitioner.Record{{Key: []byte("a")}, {Key: nil}, {Key: []byte("c"), Value: []byte{0, 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RecordsFromProto(nil, RecordsToProto(tt.records))
			if len(got) != len(tt.records) {
				t.Fatalf("%d records back, want %d", len(got), len(tt.records))
			}
			for i, r := range tt.records {
				g := got[i]
				if (r.Key == nil) != (g.Key == nil) || !bytes.Equal(r.Key, g.Key) {
					t.Errorf("record %d key %q (nil %v), want %q (nil %v)", i, g.Key, g.Key == nil, r.Key, r.Key == nil)
				}
				if !bytes.Equal(r.Value, g.Value) || len(r.Headers) != len(g.Headers) {
					t.Errorf("record %d = %+v, want %+v", i, g, r)
				}
				for j := range r.Headers {
					if r.Headers[j].Key != g.Headers[j].Key || !bytes.Equal(r.Headers[j].Value, g.Headers[j].Value) {
						t.Errorf("record %d header %d = %+v, want %+v", i, j, g.Headers[j], r.Headers[j])
					}
				}
			}
		})
	}
}

func TestRetentionAndAuthRoundTrip(t *testing.T) {
	part := retention.Partition{
		Topic: "t", Partition: 3, LogStartOffset: 5, LogEndOffset: 90, HighWatermark: 80, NowMs: 1700000000000,
		Segments: []retention.Segment{{BaseOffset: 5, NextOffset: 40, SizeBytes: 1000, LargestTimestampMs: 17}, {BaseOffset: 40, NextOffset: 90, SizeBytes: 7, LargestTimestampMs: -1}},
		Groups:   []retention.GroupOffset{{Group: "g1", Offset: 40}, {Group: "g2", Offset: -1}},
	}
	if got := PartitionFromProto(PartitionToProto(part)); !reflect.DeepEqual(got, part) {
		t.Errorf("partition %+v, want %+v", got, part)
	}
	creds := auth.Credentials{Mechanism: "PLAIN", Username: "alice", Password: []byte("pw"), AuthorizationID: "bob",
		Token: []byte("t"), Listener: "kafka", ClientHost: "127.0.0.1"}
	if got := CredentialsFromProto(CredentialsToProto(creds)); !reflect.DeepEqual(got, creds) {
		t.Errorf("credentials %+v, want %+v", got, creds)
	}
	actions := []auth.Action{
		{Principal: auth.User("alice"), Host: "10.0.0.1", Operation: auth.OpWrite, Resource: auth.Resource{Type: auth.ResourceTopic, Name: "orders", Pattern: auth.PatternLiteral}},
		{Principal: auth.Anonymous, Operation: auth.OpDescribe, Resource: auth.Resource{Type: auth.ResourceCluster, Name: auth.ClusterName}},
	}
	if got := ActionsFromProto(ActionsToProto(actions)); !reflect.DeepEqual(got, actions) {
		t.Errorf("actions %+v, want %+v", got, actions)
	}
	// Codes that do not fit Kafka's int8 enums become Unknown.
	odd := ActionsFromProto([]*pb.Action{{Operation: 300, Resource: &pb.Resource{Type: -129, Pattern: 1 << 20}}})
	if odd[0].Operation != auth.OpUnknown || odd[0].Resource.Type != auth.ResourceUnknown || odd[0].Resource.Pattern != auth.PatternUnknown {
		t.Errorf("out-of-range codes: %+v", odd[0])
	}
}

func TestConfigDecode(t *testing.T) {
	type groups struct {
		Groups []string `json:"groups"`
	}
	tests := []struct {
		name string
		json string
		want []string
		err  string
	}{
		{"table", `{"groups": ["a", "b"]}`, []string{"a", "b"}, ""},
		{"empty", ``, nil, ""},
		{"unknown key", `{"group": ["a"]}`, nil, `plugin: ext: config: json: unknown field "group"`},
		{"wrong type", `{"groups": "a"}`, nil, "cannot unmarshal string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g groups
			err := Config{Name: "ext", JSON: []byte(tt.json)}.Decode(&g)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(g.Groups, tt.want) {
				t.Fatalf("groups %v err %v, want %v", g.Groups, err, tt.want)
			}
		})
	}
}

func TestLoggerWritesHostFormat(t *testing.T) {
	var buf bytes.Buffer
	NewLogger(&buf).Warn("segment kept", "group", "billing", "offset", 42)
	var entry map[string]any
	if err := json.Unmarshal(buf.Bytes(), &entry); err != nil {
		t.Fatalf("%s: %v", buf.String(), err)
	}
	if entry["@level"] != "warn" || entry["@message"] != "segment kept" || entry["group"] != "billing" || entry["offset"] != 42.0 {
		t.Fatalf("entry %v", entry)
	}
	// The host accepts exactly this timestamp layout.
	if _, err := time.Parse("2006-01-02T15:04:05.000000Z07:00", entry["@timestamp"].(string)); err != nil {
		t.Fatal(err)
	}
}

func TestServeNeedsAKind(t *testing.T) {
	if _, err := (Set{}).pluginSet(); err == nil || !strings.Contains(err.Error(), "serves no kind") {
		t.Fatalf("err = %v", err)
	}
	set, err := (Set{Partitioner: func(Config) (partitioner.BatchPartitioner, error) { return &partitioner.Murmur2Batch{}, nil }}).pluginSet()
	if err != nil || len(set) != 1 || set[KindPartitioner] == nil {
		t.Fatalf("set %v, err %v", set, err)
	}
}

func TestConfigureChecksContractVersion(t *testing.T) {
	c := newConfigured(func(Config) (partitioner.BatchPartitioner, error) { return &partitioner.Murmur2Batch{}, nil }, NewLogger(&bytes.Buffer{}))
	if _, err := c.get(); err == nil || !strings.Contains(err.Error(), "before Configure") {
		t.Fatalf("get before Configure: %v", err)
	}
	_, err := c.configure(&pb.ConfigureRequest{Name: "p", ContractVersion: 99})
	if err == nil || !strings.Contains(err.Error(), "broker speaks contract version 99, this plugin was built for version 1") {
		t.Fatalf("err = %v", err)
	}
	if _, err := c.configure(&pb.ConfigureRequest{Name: "p", ContractVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.get(); err != nil {
		t.Fatal(err)
	}
}
