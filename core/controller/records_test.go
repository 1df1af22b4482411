package controller

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/hashicorp/raft"
)

func TestDecodeRecordRoundTrip(t *testing.T) {
	id := uuid.New()
	recs := []record{
		&controllerRecord{NodeID: 3},
		&brokerRecord{Broker{NodeID: 1, Host: "h", Port: 9092, Rack: "r"}},
		&topicRecord{Name: "t", ID: id, Partitions: newPartitions(0, [][]int32{{1, 2}}), Configs: map[string]string{"a": "b"}},
		&deleteTopicRecord{ID: id, Name: "t"},
		&partitionsRecord{TopicID: id, Partitions: newPartitions(1, [][]int32{{2}})},
		&configRecord{Resource: ConfigResource{ResourceBroker, ""}, Configs: map[string]string{"x": "y"}},
		&producerIDsRecord{First: 1000, Count: 1000},
		&planRecord{Records: []json.RawMessage{
			json.RawMessage(`{"v":1,"type":"broker_state","data":{"node_id":1,"epoch":7,"fenced":true,"controlled_shutdown":false}}`),
			json.RawMessage(`{"v":1,"type":"controller","data":{"node_id":2}}`),
		}},
	}
	for _, r := range recs {
		data, err := encodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeRecord(data)
		if err != nil {
			t.Fatalf("%s: %v", r.kind(), err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s: round trip gave %+v, want %+v", r.kind(), got, r)
		}
	}
}

func TestDecodeRecordCorrupt(t *testing.T) {
	tests := map[string]string{
		"not json":       `{"v":1,`,
		"future version": `{"v":2,"type":"controller","data":{"node_id":1}}`,
		"no version":     `{"type":"controller","data":{"node_id":1}}`,
		"unknown type":   `{"v":1,"type":"acl","data":{}}`,
		"bad payload":    `{"v":1,"type":"producer_ids","data":{"first":"zero"}}`,
		"bad uuid":       `{"v":1,"type":"delete_topic","data":{"id":"nope","name":"t"}}`,
		"empty":          ``,
	}
	for name, in := range tests {
		if _, err := decodeRecord([]byte(in)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
}

// applyTo runs one record against im through the fsm's builder and reports
// the rejection, if any.
func applyTo(im *Image, r record, index uint64) (*Image, error) {
	b := newBuilder(im)
	err := r.apply(b, index)
	return b.im, err
}

func TestRecordApplyIsAtomicAndCopyOnWrite(t *testing.T) {
	base := emptyImage("c")
	id := uuid.New()
	im, err := applyTo(base, &topicRecord{Name: "t", ID: id, Partitions: newPartitions(0, [][]int32{{1}})}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Topics) != 0 {
		t.Fatal("apply modified the base image")
	}
	tests := []struct {
		name    string
		r       record
		wantErr error
	}{
		{"same name", &topicRecord{Name: "t", ID: uuid.New(), Partitions: newPartitions(0, [][]int32{{1}})}, ErrTopicExists},
		{"same id", &topicRecord{Name: "u", ID: id, Partitions: newPartitions(0, [][]int32{{1}})}, ErrTopicExists},
		{"zero id", &topicRecord{Name: "u", Partitions: newPartitions(0, [][]int32{{1}})}, ErrInvalidRequest},
		{"bad name", &topicRecord{Name: "a b", ID: uuid.New(), Partitions: newPartitions(0, [][]int32{{1}})}, ErrInvalidTopic},
		{"no partitions", &topicRecord{Name: "u", ID: uuid.New()}, ErrInvalidPartitions},
		{"partition gap", &topicRecord{Name: "u", ID: uuid.New(), Partitions: newPartitions(1, [][]int32{{1}})}, ErrInvalidPartitions},
		{"no replicas", &topicRecord{Name: "u", ID: uuid.New(), Partitions: []Partition{{Index: 0}}}, ErrInvalidReplicaAssignment},
		{"delete unknown", &deleteTopicRecord{ID: uuid.New(), Name: "t"}, ErrUnknownTopic},
		{"delete name mismatch", &deleteTopicRecord{ID: id, Name: "other"}, ErrUnknownTopic},
		{"partitions unknown topic", &partitionsRecord{TopicID: uuid.New(), Partitions: newPartitions(1, [][]int32{{1}})}, ErrUnknownTopicID},
		{"partitions wrong index", &partitionsRecord{TopicID: id, Partitions: newPartitions(2, [][]int32{{1}})}, ErrInvalidPartitions},
		{"configs unknown topic", &configRecord{Resource: ConfigResource{ResourceTopic, "zz"}, Configs: map[string]string{"a": "b"}}, ErrUnknownTopic},
		{"configs bad type", &configRecord{Resource: ConfigResource{Type: 1, Name: "zz"}}, ErrInvalidRequest},
		{"producer ids gap", &producerIDsRecord{First: 5, Count: 1}, ErrInvalidRequest},
		{"producer ids empty", &producerIDsRecord{First: 0, Count: 0}, ErrInvalidRequest},
		{"broker invalid", &brokerRecord{Broker{NodeID: 1, Host: "", Port: 1}}, ErrInvalidRequest},
		{"controller invalid", &controllerRecord{NodeID: -1}, ErrCorrupt},
	}
	for _, tc := range tests {
		next, err := applyTo(im, tc.r, 3)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
		}
		if !reflect.DeepEqual(next, im) {
			t.Errorf("%s: rejected record changed the image", tc.name)
		}
	}
}

func TestFSMApplyBatch(t *testing.T) {
	c := &Controller{log: quietLogger, subs: map[chan *Image]struct{}{}, changed: make(chan struct{})}
	c.image.Store(emptyImage("c"))
	f := &fsm{c: c}
	enc := func(r record) []byte {
		b, err := encodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	id := uuid.New()
	logs := []*raft.Log{
		{Index: 1, Type: raft.LogConfiguration, Data: []byte("not a record")},
		{Index: 2, Type: raft.LogCommand, Data: enc(&topicRecord{Name: "t", ID: id, Partitions: newPartitions(0, [][]int32{{1}})})},
		{Index: 3, Type: raft.LogCommand, Data: enc(&topicRecord{Name: "t", ID: uuid.New(), Partitions: newPartitions(0, [][]int32{{1}})})},
		{Index: 4, Type: raft.LogCommand, Data: []byte("garbage")},
		{Index: 5, Type: raft.LogCommand, Data: enc(&producerIDsRecord{First: 0, Count: 7})},
	}
	out := f.ApplyBatch(logs)
	if out[0] != nil || out[1] != nil || out[4] != nil {
		t.Errorf("unexpected rejections: %v", out)
	}
	if err, _ := out[2].(error); !errors.Is(err, ErrTopicExists) {
		t.Errorf("duplicate topic: %v", out[2])
	}
	if err, _ := out[3].(error); !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbage: %v", out[3])
	}
	im := c.Image()
	if im.Offset != 5 || im.NextProducerID != 7 || im.Topics["t"].ID != id {
		t.Errorf("image after batch: offset %d next pid %d topics %v", im.Offset, im.NextProducerID, im.Topics)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	im := emptyImage("cluster")
	im.Offset, im.ControllerID, im.NextProducerID = 42, 1, 3000
	im.Brokers[1] = Broker{NodeID: 1, Host: "a", Port: 1, Epoch: 7}
	im.Brokers[2] = Broker{NodeID: 2, Host: "b", Port: 2, Rack: "r", Epoch: 9}
	for _, name := range []string{"x", "y"} {
		top := &Topic{Name: name, ID: uuid.New(), Partitions: newPartitions(0, [][]int32{{1, 2}, {2, 1}})}
		im.Topics[name], im.TopicsByID[top.ID] = top, top
	}
	im.Topics["x"].Internal = true
	im.Configs[ConfigResource{ResourceTopic, "x"}] = map[string]string{"retention.ms": "1"}
	im.Configs[ConfigResource{ResourceBroker, ""}] = map[string]string{"log.retention.ms": "2"}

	var buf bytes.Buffer
	if err := writeSnapshot(&buf, im); err != nil {
		t.Fatal(err)
	}
	got, err := readSnapshot(bytes.NewReader(buf.Bytes()), "cluster")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, im) {
		t.Fatalf("round trip:\n%+v\n%+v", got, im)
	}
	// Equal images give equal bytes.
	var again bytes.Buffer
	if err := writeSnapshot(&again, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatal("snapshot encoding is not deterministic")
	}
}

func TestReadSnapshotCorrupt(t *testing.T) {
	const okTopic = `{"name":"t","id":"6ba7b810-9dad-41d1-80b4-00c04fd430c8","partitions":[{"index":0,"replicas":[1]}]}`
	tests := map[string]string{
		"truncated":         `{"v":1,"topics":[`,
		"version":           `{"v":9}`,
		"negative pid":      `{"v":1,"next_producer_id":-1}`,
		"bad broker":        `{"v":1,"brokers":[{"node_id":1,"host":"","port":1}]}`,
		"dup broker":        `{"v":1,"brokers":[{"node_id":1,"host":"h","port":1},{"node_id":1,"host":"h","port":1}]}`,
		"null topic":        `{"v":1,"topics":[null]}`,
		"bad topic name":    `{"v":1,"topics":[{"name":"a b","id":"6ba7b810-9dad-41d1-80b4-00c04fd430c8","partitions":[{"index":0,"replicas":[1]}]}]}`,
		"zero id":           `{"v":1,"topics":[{"name":"t","id":"00000000-0000-0000-0000-000000000000","partitions":[{"index":0,"replicas":[1]}]}]}`,
		"dup topic":         `{"v":1,"topics":[` + okTopic + `,` + okTopic + `]}`,
		"no partitions":     `{"v":1,"topics":[{"name":"t","id":"6ba7b810-9dad-41d1-80b4-00c04fd430c8","partitions":[]}]}`,
		"partition gap":     `{"v":1,"topics":[{"name":"t","id":"6ba7b810-9dad-41d1-80b4-00c04fd430c8","partitions":[{"index":1,"replicas":[1]}]}]}`,
		"orphan configs":    `{"v":1,"configs":[{"type":2,"name":"t","configs":{"a":"b"}}]}`,
		"bad config type":   `{"v":1,"configs":[{"type":7,"name":"t","configs":{"a":"b"}}]}`,
		"empty config set":  `{"v":1,"topics":[` + okTopic + `],"configs":[{"type":2,"name":"t","configs":{}}]}`,
		"dup config":        `{"v":1,"configs":[{"type":4,"name":"","configs":{"a":"b"}},{"type":4,"name":"","configs":{"a":"c"}}]}`,
		"wrong field types": `{"v":1,"offset":"ten"}`,
	}
	for name, in := range tests {
		if _, err := readSnapshot(strings.NewReader(in), "c"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := readSnapshot(strings.NewReader(`{"v":1,"topics":[`+okTopic+`]}`), "c"); err != nil {
		t.Errorf("valid snapshot rejected: %v", err)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []record{
		&controllerRecord{NodeID: 1},
		&topicRecord{Name: "t", ID: uuid.New(), Partitions: newPartitions(0, [][]int32{{1}})},
		&producerIDsRecord{First: 0, Count: 1},
	} {
		b, _ := encodeRecord(r)
		f.Add(b)
	}
	f.Add([]byte(`{"v":1,"type":"create_partitions","data":{"partitions":[{"index":-1}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRecord(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error %v is not ErrCorrupt", err)
			}
			return
		}
		// Applying any decodable record must never panic, and a rejection
		// must leave the image unchanged.
		im := emptyImage("c")
		next, err := applyTo(im, r, 1)
		if err != nil && !reflect.DeepEqual(next, im) {
			t.Fatal("rejected record changed the image")
		}
	})
}

func FuzzReadSnapshot(f *testing.F) {
	f.Add([]byte(`{"v":1,"topics":[{"name":"t","id":"6ba7b810-9dad-41d1-80b4-00c04fd430c8","partitions":[{"index":0,"replicas":[1]}]}]}`))
	f.Add([]byte(`{"v":1,"brokers":[{"node_id":1,"host":"h","port":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := readSnapshot(bytes.NewReader(data), "c")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := writeSnapshot(&buf, im); err != nil {
			t.Fatal(err)
		}
		again, err := readSnapshot(&buf, "c")
		if err != nil || !reflect.DeepEqual(again, im) {
			t.Fatalf("accepted snapshot does not round-trip: %v", err)
		}
	})
}
