package tests

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/share"
	"github.com/gregorbroker/gregor/core/share/coordinator"
)

// stateRecord is one __share_group_state record of a share-partition.
type stateRecord struct {
	offset int64
	update bool
	value  []byte
}

// stateRecordsOf reads a __share_group_state partition from its log start
// to its end and returns the records of key k, and the log start offset.
func stateRecordsOf(t *testing.T, addr string, k share.PartitionKey) ([]stateRecord, int64) {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, share.StateTopic)
	if err != nil || len(md.Topics[share.StateTopic].Partitions) == 0 {
		t.Fatalf("metadata of %s: %v", share.StateTopic, err)
	}
	idx := coordinator.StateTopicPartition(k, int32(len(md.Topics[share.StateTopic].Partitions)))
	starts, err := adm.ListStartOffsets(ctx, share.StateTopic)
	if err != nil {
		t.Fatalf("list start offsets: %v", err)
	}
	ends, err := adm.ListEndOffsets(ctx, share.StateTopic)
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	start, _ := starts.Lookup(share.StateTopic, idx)
	end, _ := ends.Lookup(share.StateTopic, idx)
	var out []stateRecord
	if end.Offset <= start.Offset {
		return out, start.Offset
	}
	cl := newShareClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		share.StateTopic: {idx: kgo.NewOffset().AtStart()}}))
	for next := start.Offset; next < end.Offset; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s-%d up to %d: at %d: %v", share.StateTopic, idx, end.Offset, next, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			got, update, ok, err := share.DecodeStateKey(r.Key)
			if err != nil || !ok {
				t.Fatalf("record %d of %s-%d: key %x: %v", r.Offset, share.StateTopic, idx, r.Key, err)
			}
			if got == k {
				out = append(out, stateRecord{r.Offset, update, r.Value})
			}
		})
	}
	return out, start.Offset
}

// topicConfigsOf returns a topic's config values (DescribeConfigs).
func topicConfigsOf(t *testing.T, addr, topic string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rcs, err := newAdmin(t, addr).DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("describe configs of %s: %v", topic, err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe configs of %s: %v %v", topic, err, rc.Err)
	}
	out := map[string]string{}
	for _, c := range rc.Configs {
		out[c.Key] = c.MaybeValue()
	}
	return out
}

func recordTypes(rs []stateRecord) string {
	s := ""
	for _, r := range rs {
		if r.update {
			s += "U"
		} else {
			s += "S"
		}
	}
	return s
}

// __share_group_state holds Kafka's record types: a share-partition's
// first write is a ShareSnapshot, the next ones ShareUpdate records with
// the state batches written, until
// share.coordinator.snapshot.update.records.per.snapshot (here 2) of them
// follow the snapshot; the next write is a snapshot in the next snapshot
// epoch, and the records below it are deleted (the topic is created with
// cleanup.policy=delete and retention.ms=-1, as Kafka creates it). After
// a restart the share coordinator replays snapshot and updates to the same
// state.
func TestShareStateSnapshotAndUpdateRecords(t *testing.T) {
	dir := t.TempDir()
	perSnapshot := func(c *config.Config) { c.Groups.ShareCoordinatorSnapshotUpdateRecordsPerSnapshot = 2 }
	b := startRestartableBroker(t, dir, perSnapshot)
	topic, group := "share-state-records", "sg-state-records"
	createTopic(t, b.Addr, topic, 1, nil)
	id := topicID(t, b.Addr, topic)
	k := share.PartitionKey{Group: group, TopicPartition: share.TopicPartition{TopicID: id}}
	cl := newShareClient(t, b.Addr)
	// A share fetch of another group creates the state topic; that group's
	// state is in another of its 50 partitions, so it keeps none of k's
	// records.
	warmup := "sg-state-records-warmup"
	for n := 0; coordinator.StateTopicPartition(share.PartitionKey{Group: warmup, TopicPartition: k.TopicPartition}, 50) ==
		coordinator.StateTopicPartition(k, 50); n++ {
		warmup = fmt.Sprintf("sg-state-records-warmup-%d", n)
	}
	m := newRawShareMember(t, b.Addr, warmup, "w")
	m.join(topic)
	m.fetch(id, 0, 0)
	const avail, acked, archived = 0, 2, 4
	eventually(t, 30*time.Second, "the first write", func() error {
		return writeState(t, cl, group, id, 0, 1, 0, stateBatch{0, 9, avail, 1})
	})
	cfgs := topicConfigsOf(t, b.Addr, share.StateTopic)
	if cfgs["cleanup.policy"] != "delete" || cfgs["retention.ms"] != "-1" {
		t.Fatalf("%s configs: cleanup.policy=%q retention.ms=%q, want delete and -1", share.StateTopic, cfgs["cleanup.policy"], cfgs["retention.ms"])
	}
	for i, w := range [][]stateBatch{{{0, 1, acked, 1}}, {{2, 2, archived, 1}, {3, 3, acked, 1}}} {
		if err := writeState(t, cl, group, id, 0, 1, -1, w...); err != nil {
			t.Fatalf("write %d: %v", i+2, err)
		}
	}
	rs, _ := stateRecordsOf(t, b.Addr, k)
	if got := recordTypes(rs); got != "SUU" {
		t.Fatalf("records after three writes: %s, want SUU (a ShareSnapshot, then two ShareUpdates)", got)
	}
	um, u, err := share.DecodeUpdateValue(rs[2].value)
	want := share.Snapshot{StartOffset: -1, Batches: []share.StateBatch{
		{FirstOffset: 2, LastOffset: 2, State: share.Archived, DeliveryCount: 1},
		{FirstOffset: 3, LastOffset: 3, State: share.Acknowledged, DeliveryCount: 1}}}
	if err != nil || um.SnapshotEpoch != 0 || um.LeaderEpoch != 1 || fmt.Sprint(u) != fmt.Sprint(want) {
		t.Fatalf("second ShareUpdate: %+v %+v %v, want snapshot epoch 0, leader epoch 1, %+v", um, u, err, want)
	}

	// The third write after the snapshot is a snapshot again; the records
	// before it go.
	if err := writeState(t, cl, group, id, 0, 1, 2, stateBatch{4, 5, archived, 2}); err != nil {
		t.Fatalf("write 4: %v", err)
	}
	if err := writeState(t, cl, group, id, 0, 2, -1, stateBatch{6, 6, acked, 1}); err != nil {
		t.Fatalf("write 5: %v", err)
	}
	rs, logStart := stateRecordsOf(t, b.Addr, k)
	if got := recordTypes(rs); got != "SU" || logStart != rs[0].offset {
		t.Fatalf("records after five writes: %s from log start %d (first at %v), want SU with the snapshot at the log start", got, logStart, rs)
	}
	sm, snap, err := share.DecodeSnapshotValue(rs[0].value)
	if err != nil || sm.SnapshotEpoch != 1 || snap.StartOffset != 2 {
		t.Fatalf("second ShareSnapshot: %+v %+v %v, want snapshot epoch 1 and start offset 2", sm, snap, err)
	}
	before, err := readState(t, cl, group, id, 2)
	wantBatches := []stateBatch{{2, 2, archived, 1}, {3, 3, acked, 1}, {4, 5, archived, 2}, {6, 6, acked, 1}, {7, 9, avail, 1}}
	if err != nil || before.StartOffset != 2 || fmt.Sprint(stateBatchesOf(before)) != fmt.Sprint(wantBatches) {
		t.Fatalf("state: %v start %d %v, want start 2 %v", err, before.StartOffset, stateBatchesOf(before), wantBatches)
	}

	b.Stop()
	b = startRestartableBroker(t, dir, perSnapshot)
	cl = newShareClient(t, b.Addr)
	var after kmsg.ReadShareGroupStateResponseTopicPartition
	eventually(t, 30*time.Second, "the state read back after the restart", func() error {
		var err error
		after, err = readState(t, cl, group, id, 2)
		return err
	})
	if after.StartOffset != before.StartOffset || after.StateEpoch != before.StateEpoch ||
		fmt.Sprint(stateBatchesOf(before)) != fmt.Sprint(stateBatchesOf(after)) {
		t.Fatalf("after the restart: start %d epoch %d %v, want start %d epoch %d %v", after.StartOffset, after.StateEpoch,
			stateBatchesOf(after), before.StartOffset, before.StateEpoch, stateBatchesOf(before))
	}

	// Kafka's own decoder reads the records (when its jars are here).
	script, ok := kafkaTools(t)
	if !ok {
		return
	}
	segs, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%s-%d", share.StateTopic, coordinator.StateTopicPartition(k, 50)), "*.log"))
	if len(segs) == 0 {
		t.Fatalf("no segment of %s-%d under %s", share.StateTopic, coordinator.StateTopicPartition(k, 50), dir)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer dcancel()
	out, err := exec.CommandContext(dctx, script, append([]string{"kafka-dump-log", "--share-group-state-decoder", "--files"}, segs...)...).CombinedOutput()
	dump := string(out)
	// The second snapshot (epoch 1, start offset 2) and the update after
	// it, as Kafka decodes them.
	for _, want := range []string{`"type":"0"`, `"type":"1"`, `"groupId":"` + group + `"`, `"snapshotEpoch":1`, `"startOffset":2`,
		`"startOffset":-1`, `"deliveryState":2`} {
		if err != nil || !strings.Contains(dump, want) || strings.Contains(dump, "Exception") || strings.Contains(dump, "Unknown") {
			t.Fatalf("kafka-dump-log --share-group-state-decoder: %v; no %s in:\n%s", err, want, dump)
		}
	}
}
