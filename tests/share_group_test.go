package tests

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareConsumer is a franz-go share group member that accepts every
// record it polls and remembers their offsets and delivery counts.
type shareConsumer struct {
	cl   *kgo.Client
	mu   sync.Mutex
	got  map[int64]int32 // offset -> delivery count
	vals map[string]int  // value -> times read
	dups int
	stop context.CancelFunc
	done chan struct{}
}

func startShareConsumer(t *testing.T, addr, group, topic string, opts ...kgo.Opt) *shareConsumer {
	t.Helper()
	cl := newShareClient(t, addr, append([]kgo.Opt{kgo.ShareGroup(group), kgo.ConsumeTopics(topic)}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	c := &shareConsumer{cl: cl, got: map[int64]int32{}, vals: map[string]int{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				c.mu.Lock()
				if _, ok := c.got[r.Offset]; ok {
					c.dups++
				}
				c.got[r.Offset] = r.DeliveryCount()
				c.vals[string(r.Value)]++
				c.mu.Unlock()
				r.Ack(kgo.AckAccept)
			})
		}
	}()
	t.Cleanup(func() { c.close() })
	return c
}

func (c *shareConsumer) close() {
	c.stop()
	<-c.done
}

func (c *shareConsumer) offsets() map[int64]int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int64]int32, len(c.got))
	for o, d := range c.got {
		out[o] = d
	}
	return out
}

// Three share consumers on one partition: each record goes to exactly one
// of them, and together they read every record once.
func TestShareGroupThreeConsumersOnePartition(t *testing.T) {
	b := startBroker(t, shareConfig)
	topic, group := "share-three", "sg-three"
	createTopic(t, b.Addr, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	var values []string
	for i := 0; i < 300; i++ {
		values = append(values, "v"+strconv.Itoa(i))
	}
	produceValues(t, b.Addr, topic, values...)
	cs := []*shareConsumer{
		startShareConsumer(t, b.Addr, group, topic, kgo.ShareMaxRecords(20), kgo.ShareMaxRecordsStrict()),
		startShareConsumer(t, b.Addr, group, topic, kgo.ShareMaxRecords(20), kgo.ShareMaxRecordsStrict()),
		startShareConsumer(t, b.Addr, group, topic, kgo.ShareMaxRecords(20), kgo.ShareMaxRecordsStrict()),
	}
	eventually(t, 60*time.Second, "300 records read by the group", func() error {
		n := 0
		for _, c := range cs {
			n += len(c.offsets())
		}
		if n < 300 {
			return fmt.Errorf("%d records read", n)
		}
		return nil
	})
	seen := map[int64]int{}
	readers := 0
	for i, c := range cs {
		got := c.offsets()
		if len(got) > 0 {
			readers++
		}
		for o, d := range got {
			if d != 1 {
				t.Errorf("consumer %d: offset %d delivered %d times", i, o, d)
			}
			seen[o]++
		}
		if c.dups > 0 {
			t.Errorf("consumer %d read %d records twice", i, c.dups)
		}
	}
	for o := int64(0); o < 300; o++ {
		if seen[o] != 1 {
			t.Errorf("offset %d read by %d consumers", o, seen[o])
		}
	}
	if readers < 2 {
		t.Errorf("only %d of 3 consumers read anything", readers)
	}
	d := describeShareGroup(t, b.Addr, group)
	if d.GroupState != "Stable" || len(d.Members) != 3 {
		t.Fatalf("ShareGroupDescribe: state %s, %d members", d.GroupState, len(d.Members))
	}
	for _, m := range d.Members {
		if len(m.Assignment.TopicPartitions) != 1 || m.Assignment.TopicPartitions[0].Topic != topic {
			t.Fatalf("member %s assignment %+v", m.MemberID, m.Assignment)
		}
	}
}

// A member that stops with records acquired: after the lock expires
// another member gets them, with delivery count 2.
func TestShareGroupCrashedMemberRedelivered(t *testing.T) {
	b := startBroker(t, shareConfig, withHTTP)
	topic, group := "share-crash", "sg-crash"
	createTopic(t, b.Addr, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceValues(t, b.Addr, topic, "a", "b", "c", "d", "e")
	id := topicID(t, b.Addr, topic)
	dead := newRawShareMember(t, b.Addr, group, "dead-member")
	dead.join(topic)
	p := dead.fetch(id, 0, 5*time.Second)
	if got := acquiredOffsets(p); len(got) != 5 || got[0] != 1 {
		t.Fatalf("first member acquired %v (error %v)", got, kerr.ErrorForCode(p.ErrorCode))
	}
	// dead-member never acknowledges. A live member reads nothing while the
	// locks hold, then all five with delivery count 2.
	c := startShareConsumer(t, b.Addr, group, topic)
	eventually(t, 30*time.Second, "records redelivered after the lock expired", func() error {
		if got := c.offsets(); len(got) != 5 {
			return fmt.Errorf("%d redelivered", len(got))
		}
		return nil
	})
	for o, d := range c.offsets() {
		if d != 2 {
			t.Errorf("offset %d: delivery count %d, want 2", o, d)
		}
	}
	// The five expired locks are counted on /metrics.
	if n := metric(t, b.HTTPAddr, "gregor_share_acquisition_lock_timeouts_total"); n < 5 {
		t.Fatalf("gregor_share_acquisition_lock_timeouts_total %v, want at least 5", n)
	}
	// The crashed member's late acknowledgement is refused.
	if err := dead.ack(id, 0, false, rawAck{0, 0, 1}); err != kerr.InvalidRecordState {
		t.Fatalf("late ack of a lost lock: %v, want INVALID_RECORD_STATE", err)
	}
}

// Reject archives a record for good; release makes it available again
// until the delivery count limit archives it; renew keeps a lock past its
// first deadline.
func TestShareGroupRejectReleaseLimitRenew(t *testing.T) {
	b := startBroker(t, shareConfig, withHTTP)
	topic, group := "share-acks", "sg-acks"
	createTopic(t, b.Addr, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceValues(t, b.Addr, topic, "reject-me", "release-me", "renew-me")
	id := topicID(t, b.Addr, topic)
	m := newRawShareMember(t, b.Addr, group, "m1")
	m.join(topic)
	acquiredAt := time.Now()
	got := acquiredOffsets(m.fetch(id, 0, 5*time.Second))
	if len(got) != 3 {
		t.Fatalf("acquired %v", got)
	}
	// Renew offset 2 and reject 0 now; release 1 again and again.
	if err := m.ack(id, 0, true, rawAck{2, 2, 4}); err != nil {
		t.Fatalf("renew: %v", err)
	}
	for delivery := int16(1); delivery <= 5; delivery++ {
		acks := []rawAck{{1, 1, 2}}
		if delivery == 1 {
			acks = append([]rawAck{{0, 0, 3}}, acks...)
		}
		p := m.fetch(id, 0, 0, acks...)
		if err := kerr.ErrorForCode(p.AcknowledgeErrorCode); err != nil {
			t.Fatalf("delivery %d: acknowledge error %v", delivery, err)
		}
		got := acquiredOffsets(p)
		if _, ok := got[0]; ok {
			t.Fatalf("rejected record redelivered: %v", got)
		}
		if delivery == 5 {
			if len(got) != 0 {
				t.Fatalf("after 5 deliveries: acquired %v, want nothing (archived)", got)
			}
			break
		}
		if got[1] != delivery+1 {
			t.Fatalf("delivery %d: released record acquired %v", delivery, got)
		}
	}
	// Offset 2 is renewed every half second until twice the lock duration
	// (2 s) has passed since it was acquired: it is still ours to accept.
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for time.Since(acquiredAt) < 4*time.Second {
		<-tick.C
		if err := m.ack(id, 0, true, rawAck{2, 2, 4}); err != nil {
			t.Fatalf("renew after %v: %v", time.Since(acquiredAt), err)
		}
	}
	if err := m.ack(id, 0, false, rawAck{2, 2, 1}); err != nil {
		t.Fatalf("accept after renew: %v", err)
	}
	if start, lag := describeShareOffsets(t, b.Addr, group, topic, 0); start != 3 || lag != 0 {
		t.Fatalf("share-partition start offset %d lag %d, want 3 and 0 (everything acknowledged or archived)", start, lag)
	}
	// /metrics: the rejected record and the one over the delivery limit
	// archived, nothing left in flight or under a lock.
	for name, want := range map[string]float64{"gregor_share_archived_records_total": 2,
		"gregor_share_inflight_records": 0, "gregor_share_acquired_records": 0} {
		if got := metric(t, b.HTTPAddr, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

func (c *shareConsumer) values() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.vals))
	for v, n := range c.vals {
		out[v] = n
	}
	return out
}

// share.isolation.level=read_committed: a share group delivers committed
// transactional records only, never aborted ones or control records;
// read_uncommitted delivers both.
func TestShareGroupReadCommitted(t *testing.T) {
	b := startBroker(t, shareConfig, txnConfig)
	topic := "share-txn"
	createTopic(t, b.Addr, topic, 2, nil)
	committed := produceTxns(t, txnClient(t, b.Addr, "share-txn-producer"), topic, 4)
	for _, tc := range []struct {
		level string
		want  int
	}{{"read_committed", 12}, {"read_uncommitted", 24}} {
		t.Run(tc.level, func(t *testing.T) {
			group := "sg-" + tc.level
			shareEarliest(t, b.Addr, group)
			level := tc.level
			if err := alterGroupConfig(t, newShareClient(t, b.Addr), group, "share.isolation.level", &level); err != nil {
				t.Fatal(err)
			}
			c := startShareConsumer(t, b.Addr, group, topic)
			eventually(t, 30*time.Second, "records read", func() error {
				if n := len(c.values()); n < tc.want {
					return fmt.Errorf("%d of %d read", n, tc.want)
				}
				return nil
			})
			got := c.values()
			if len(got) != tc.want {
				t.Fatalf("%d distinct values read, want %d: %v", len(got), tc.want, got)
			}
			for v, n := range got {
				if n != 1 {
					t.Errorf("%s read %d times", v, n)
				}
				if tc.level == "read_committed" && !committed[v] {
					t.Errorf("aborted record %s delivered under read_committed", v)
				}
			}
		})
	}
}

// ListGroups, DescribeGroups, ConsumerGroupDescribe and DeleteGroups treat
// share groups as Kafka does: listed with type "share", not a classic or
// consumer group, deleted only when empty.
func TestShareGroupAdmin(t *testing.T) {
	b := startBroker(t, shareConfig)
	topic, group := "share-admin", "sg-admin"
	createTopic(t, b.Addr, topic, 2, nil)
	m := newRawShareMember(t, b.Addr, group, "m1")
	if a := m.join(topic); a == nil || len(a.TopicPartitions) != 1 || len(a.TopicPartitions[0].Partitions) != 2 {
		t.Fatalf("assignment %+v", a)
	}
	adm := newAdmin(t, b.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lg, ok := listed[group]
	if !ok || lg.GroupType != "share" || lg.ProtocolType != "share" || lg.State != "Stable" {
		t.Fatalf("ListGroups: %+v (found %v)", lg, ok)
	}
	if byType, err := adm.ListGroupsByType(ctx, []string{"consumer"}); err != nil || len(byType[group].Group) != 0 {
		t.Fatalf("ListGroups types=consumer lists the share group: %+v %v", byType, err)
	}
	dg, err := adm.DescribeGroups(ctx, group)
	if err != nil && dg == nil {
		t.Fatal(err)
	}
	if e := dg[group].Err; e != kerr.GroupIDNotFound {
		t.Fatalf("DescribeGroups of a share group: %v, want GROUP_ID_NOT_FOUND", e)
	}
	del, err := adm.DeleteGroups(ctx, group)
	if err != nil || del[group].Err != kerr.NonEmptyGroup {
		t.Fatalf("DeleteGroups of a share group with a member: %+v %v", del, err)
	}
	// The member leaves; the group is empty, then deleted.
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = group, "m1", -1
	if resp, err := req.RequestWith(ctx, m.cl); err != nil || resp.ErrorCode != 0 || resp.MemberEpoch != -1 {
		t.Fatalf("leave: %+v %v", resp, err)
	}
	if d := describeShareGroup(t, b.Addr, group); d.GroupState != "Empty" || len(d.Members) != 0 {
		t.Fatalf("after leave: %s with %d members", d.GroupState, len(d.Members))
	}
	del, err = adm.DeleteGroups(ctx, group)
	if err != nil || del[group].Err != nil {
		t.Fatalf("DeleteGroups of an empty share group: %+v %v", del, err)
	}
	if listed, _ := adm.ListGroups(ctx); listed[group].Group != "" {
		t.Fatalf("deleted share group still listed: %+v", listed[group])
	}
}

// DescribeShareGroupOffsets, AlterShareGroupOffsets and
// DeleteShareGroupOffsets: start offset and lag, a reset of an empty
// group, and forgetting a topic's state.
func TestShareGroupOffsetsAdmin(t *testing.T) {
	b := startBroker(t, shareConfig)
	topic, group := "share-offsets", "sg-offsets"
	createTopic(t, b.Addr, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceValues(t, b.Addr, topic, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	id := topicID(t, b.Addr, topic)
	m := newRawShareMember(t, b.Addr, group, "m1")
	m.join(topic)
	if got := acquiredOffsets(m.fetch(id, 0, 5*time.Second)); len(got) != 10 {
		t.Fatalf("acquired %v", got)
	}
	if err := m.ack(id, 0, false, rawAck{0, 4, 1}); err != nil {
		t.Fatal(err)
	}
	if start, lag := describeShareOffsets(t, b.Addr, group, topic, 0); start != 5 || lag != 5 {
		t.Fatalf("after accepting 0-4: start %d lag %d, want 5 and 5", start, lag)
	}
	cl := newShareClient(t, b.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	alter := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	alter.GroupID = group
	alter.Topics = []kmsg.AlterShareGroupOffsetsRequestTopic{{Topic: topic,
		Partitions: []kmsg.AlterShareGroupOffsetsRequestTopicPartition{{Partition: 0, StartOffset: 2}}}}
	if resp, err := alter.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("alter with a member: %+v %v, want NON_EMPTY_GROUP", resp, err)
	}
	leave := kmsg.NewPtrShareGroupHeartbeatRequest()
	leave.GroupID, leave.MemberID, leave.MemberEpoch = group, "m1", -1
	if _, err := leave.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	resp, err := alter.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("alter of an empty group: %+v %v", resp, err)
	}
	if start, lag := describeShareOffsets(t, b.Addr, group, topic, 0); start != 2 || lag != 8 {
		t.Fatalf("after reset to 2: start %d lag %d, want 2 and 8", start, lag)
	}
	m2 := newRawShareMember(t, b.Addr, group, "m2")
	m2.join(topic)
	if got := acquiredOffsets(m2.fetch(id, 0, 5*time.Second)); len(got) != 8 || got[2] != 1 {
		t.Fatalf("after reset: acquired %v, want 2-9 as first deliveries", got)
	}
	leave.MemberID = "m2"
	if _, err := leave.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	del := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	del.GroupID = group
	del.Topics = []kmsg.DeleteShareGroupOffsetsRequestTopic{{Topic: topic}}
	if resp, err := del.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete offsets: %+v %v", resp, err)
	}
	if start, _ := describeShareOffsets(t, b.Addr, group, topic, 0); start != -1 {
		t.Fatalf("after delete: start %d, want -1 (no state)", start)
	}
}

// A share session is tied to its connection: when the connection closes,
// the records it held are released at once, long before their 30 s locks
// would expire, and delivered again with delivery count 2.
func TestShareGroupConnectionCloseReleases(t *testing.T) {
	b := startBroker(t, groupConfig)
	topic, group := "share-conn", "sg-conn"
	createTopic(t, b.Addr, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceValues(t, b.Addr, topic, "a", "b", "c")
	id := topicID(t, b.Addr, topic)
	gone := newRawShareMember(t, b.Addr, group, "gone")
	gone.join(topic)
	if got := acquiredOffsets(gone.fetch(id, 0, 5*time.Second)); len(got) != 3 {
		t.Fatalf("acquired %v", got)
	}
	other := newRawShareMember(t, b.Addr, group, "other")
	other.join(topic)
	if got := acquiredOffsets(other.fetch(id, 0, 0)); len(got) != 0 {
		t.Fatalf("acquired %v while the first member holds them", got)
	}
	start := time.Now()
	gone.cl.Close()
	var got map[int64]int16
	eventually(t, 20*time.Second, "records released by the closed connection", func() error {
		got = acquiredOffsets(other.fetch(id, 0, 500*time.Millisecond))
		if len(got) == 0 {
			return fmt.Errorf("nothing acquired")
		}
		return nil
	})
	if len(got) != 3 || got[0] != 2 || got[2] != 2 {
		t.Fatalf("after the close: %v, want offsets 0-2 at delivery count 2", got)
	}
	if waited := time.Since(start); waited > 25*time.Second {
		t.Fatalf("released after %v: that is lock expiry, not the close", waited)
	}
}
