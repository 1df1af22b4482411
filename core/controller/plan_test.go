package controller

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/hashicorp/raft"
)

// A broker's loss is planned from an image that a concurrent change has
// made stale for one partition: that partition's change is refused. The
// plan must then apply not at all, where it once applied all but that
// change and left the broker recorded offline yet leading the partition,
// with no trigger left to move it (the heartbeat path acts only on the
// transition to offline).
func TestLogDirOfflinePlanAppliesWholeOrNotAtAll(t *testing.T) {
	sc := newSessionCluster(t, 3)
	mustCreate(t, sc.c, CreateTopic{Name: "t", NumPartitions: 6, ReplicationFactor: 3})
	stale := sc.c.Image()
	// Shrink the ISR of one partition broker 1 leads, keeping it leader:
	// the partition epoch moves on, so a plan made from stale is refused
	// for that partition.
	var moved *Partition
	topic := stale.Topics["t"]
	for i := range topic.Partitions {
		if p := &topic.Partitions[i]; p.Leader == 1 && slices.Contains(p.ISR, 3) {
			moved = p
			break
		}
	}
	if moved == nil {
		t.Fatal("setup: broker 1 leads no partition with a full ISR")
	}
	isr := slices.DeleteFunc(slices.Clone(moved.ISR), func(id int32) bool { return id == 3 })
	shrink := &partitionChangeRecord{TopicID: topic.ID, Partition: moved.Index, PartitionEpoch: moved.PartitionEpoch,
		Leader: 1, ISR: isr, Replicas: moved.Replicas}
	ctx := context.Background()
	sc.c.writeMu.Lock()
	err := firstErr(sc.c.proposeAll(ctx, []record{shrink}))
	sc.c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	before := sc.c.Image()

	sc.c.writeMu.Lock()
	err = sc.c.takeLogDirOffline(ctx, stale, stale.Brokers[1])
	sc.c.writeMu.Unlock()
	if !errors.Is(err, ErrInvalidUpdateVersion) {
		t.Fatalf("plan from a stale image: %v, want ErrInvalidUpdateVersion", err)
	}
	after := sc.c.Image()
	if after.Brokers[1].LogDirOffline {
		t.Errorf("broker 1 recorded offline by a refused plan; it still leads %d partitions", after.leaderships(1))
	}
	if !reflect.DeepEqual(after.Topics, before.Topics) || !reflect.DeepEqual(after.Brokers, before.Brokers) {
		t.Error("a refused plan changed part of the image")
	}

	// Nothing was applied, so the next heartbeat reporting the dir offline
	// still sees the transition and plans the whole loss again.
	if _, err := sc.c.BrokerHeartbeat(ctx, Heartbeat{
		NodeID: 1, Epoch: sc.epoch[1], MetadataOffset: int64(after.Offset), LogDirOffline: true,
	}); err != nil {
		t.Fatal(err)
	}
	im := sc.c.Image()
	if !im.Brokers[1].LogDirOffline {
		t.Fatal("broker 1 not offline after reporting it")
	}
	for i, p := range im.Topics["t"].Partitions {
		if p.Leader == 1 || p.Leader < 0 || slices.Contains(p.ISR, 1) {
			t.Errorf("t-%d: leader %d ISR %v; broker 1 (offline log dir) should be out", i, p.Leader, p.ISR)
		}
	}
}

// The fsm applies a plan record whole or not at all, next to single
// records as older logs hold them, and refuses malformed plans without
// panicking.
func TestFSMPlanRecord(t *testing.T) {
	c := &Controller{log: quietLogger, subs: map[chan *Image]struct{}{}, changed: make(chan struct{})}
	im := emptyImage("c")
	for id := int32(1); id <= 3; id++ {
		im.Brokers[id] = Broker{NodeID: id, Host: "h", Port: 9090 + id, Epoch: int64(id)}
	}
	c.image.Store(im)
	f := &fsm{c: c}
	enc := func(r record) []byte {
		t.Helper()
		b, err := encodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	plan := func(rs ...record) []byte {
		t.Helper()
		p, err := newPlan(rs)
		if err != nil {
			t.Fatal(err)
		}
		return enc(p)
	}
	id := uuid.New()
	fence1 := &brokerStateRecord{NodeID: 1, Epoch: 1, Fenced: true}
	move := func(p, epoch int32) *partitionChangeRecord {
		return &partitionChangeRecord{TopicID: id, Partition: p, PartitionEpoch: epoch, Leader: 2, ISR: []int32{2, 3}, Replicas: []int32{1, 2, 3}}
	}
	out := f.ApplyBatch([]*raft.Log{
		{Index: 1, Type: raft.LogCommand, Data: enc(&topicRecord{Name: "t", ID: id, Partitions: newPartitions(0, [][]int32{{1, 2, 3}, {1, 2, 3}})})},
		// A single record, as every entry was before plans.
		{Index: 2, Type: raft.LogCommand, Data: enc(&brokerStateRecord{NodeID: 3, Epoch: 3})},
	})
	if out[0] != nil || out[1] != nil {
		t.Fatalf("setup: %v", out)
	}
	base := c.Image()

	rejected := []struct {
		name string
		data []byte
		want error
	}{
		{"last change stale", plan(fence1, move(0, 0), move(1, 7)), ErrInvalidUpdateVersion},
		{"first change stale", plan(fence1, move(0, 7), move(1, 0)), ErrInvalidUpdateVersion},
		{"unknown broker", plan(move(0, 0), &brokerStateRecord{NodeID: 9, Epoch: 1}), ErrBrokerNotRegistered},
		{"empty", enc(&planRecord{}), ErrCorrupt},
		{"plan in a plan", enc(&planRecord{Records: []json.RawMessage{enc(fence1), enc(&planRecord{Records: []json.RawMessage{enc(fence1)}})}}), ErrCorrupt},
		{"corrupt member", enc(&planRecord{Records: []json.RawMessage{enc(fence1), json.RawMessage(`{"v":1,"type":"nope","data":{}}`)}}), ErrCorrupt},
		{"member not json", []byte(`{"v":1,"type":"plan","data":{"records":[7]}}`), ErrCorrupt},
	}
	for i, tc := range rejected {
		out := f.ApplyBatch([]*raft.Log{{Index: uint64(3 + i), Type: raft.LogCommand, Data: tc.data}})
		if err, _ := out[0].(error); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, out[0], tc.want)
		}
		got := c.Image()
		if !reflect.DeepEqual(got.Brokers, base.Brokers) || !reflect.DeepEqual(got.Topics, base.Topics) {
			t.Errorf("%s: a refused plan changed the image", tc.name)
		}
	}

	out = f.ApplyBatch([]*raft.Log{{Index: 20, Type: raft.LogCommand, Data: plan(fence1, move(0, 0), move(1, 0))}})
	if out[0] != nil {
		t.Fatalf("whole plan: %v", out[0])
	}
	got := c.Image()
	if !got.Brokers[1].Fenced || got.leaderships(1) != 0 || got.Offset != 20 {
		t.Errorf("after the plan: broker 1 %+v leads %d, offset %d", got.Brokers[1], got.leaderships(1), got.Offset)
	}
	if base.Brokers[1].Fenced || base.leaderships(1) != 2 {
		t.Error("applying a plan modified the image it started from")
	}
}

// A plan is not accepted from a peer: it may carry broker-state records.
func TestForwardedPlanRefused(t *testing.T) {
	if err := checkForwardedKind(typePlan, "User:admin"); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("forwarded plan: %v, want ErrInvalidRequest", err)
	}
}
