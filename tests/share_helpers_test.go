package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// shareConfig shortens the share group timers for tests: locks of 2 s
// (Kafka's floor for the broker setting is 1 s) and share heartbeats
// every second.
func shareConfig(c *config.Config) {
	groupConfig(c)
	c.Groups.GroupShareMinRecordLockDurationMs = 1000
	c.Groups.GroupShareRecordLockDurationMs = 2000
	c.Groups.GroupShareMinHeartbeatIntervalMs = 100
	c.Groups.GroupShareHeartbeatIntervalMs = 200
}

// withHTTP opens the http listener (/metrics) on a free port.
func withHTTP(c *config.Config) { c.Listeners.HTTP = "127.0.0.1:0" }

// rawShareMember drives the share group protocol with kmsg requests, so a
// test can stop a member at any point, as a crash would.
type rawShareMember struct {
	t       *testing.T
	cl      *kgo.Client
	group   string
	id      string
	epoch   int32
	session int32
}

func newRawShareMember(t *testing.T, addr, group, id string) *rawShareMember {
	return &rawShareMember{t: t, cl: newShareClient(t, addr), group: group, id: id}
}

func (m *rawShareMember) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 15*time.Second)
}

// join heartbeats at epoch 0 and returns the assignment.
func (m *rawShareMember) join(topics ...string) *kmsg.ShareGroupHeartbeatResponseAssignment {
	m.t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = m.group, m.id, 0, topics
	ctx, cancel := m.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		m.t.Fatalf("ShareGroupHeartbeat: %v", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("ShareGroupHeartbeat: %v", err)
	}
	m.epoch = resp.MemberEpoch
	return resp.Assignment
}

type rawAck struct {
	first, last int64
	typ         int8
}

// fetch sends one ShareFetch for a partition with piggybacked acks and
// returns the partition's answer.
func (m *rawShareMember) fetch(topicID [16]byte, partition int32, wait time.Duration, acks ...rawAck) kmsg.ShareFetchResponseTopicPartition {
	m.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 2
	req.GroupID, req.MemberID = &m.group, &m.id
	req.ShareSessionEpoch = m.session
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = int32(wait.Milliseconds()), 1, 1<<20, 500, 500
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = topicID
	rp := kmsg.NewShareFetchRequestTopicPartition()
	rp.Partition = partition
	for _, a := range acks {
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch{
			FirstOffset: a.first, LastOffset: a.last, AcknowledgeTypes: []int8{a.typ}})
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := m.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		m.t.Fatalf("ShareFetch: %v", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("ShareFetch: %v (%v)", err, resp.ErrorMessage)
	}
	m.session++
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Partition == partition {
				return p
			}
		}
	}
	return kmsg.ShareFetchResponseTopicPartition{Partition: partition}
}

// ack sends a ShareAcknowledge for a partition and returns its error.
func (m *rawShareMember) ack(topicID [16]byte, partition int32, renew bool, acks ...rawAck) error {
	m.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = 2
	req.GroupID, req.MemberID = &m.group, &m.id
	req.ShareSessionEpoch, req.IsRenewAck = m.session, renew
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = topicID
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	rp.Partition = partition
	for _, a := range acks {
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{
			FirstOffset: a.first, LastOffset: a.last, AcknowledgeTypes: []int8{a.typ}})
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := m.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		m.t.Fatalf("ShareAcknowledge: %v", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("ShareAcknowledge: %v (%v)", err, resp.ErrorMessage)
	}
	m.session++
	return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
}

// acquiredOffsets flattens AcquiredRecords into offset -> delivery count.
func acquiredOffsets(p kmsg.ShareFetchResponseTopicPartition) map[int64]int16 {
	out := map[int64]int16{}
	for _, a := range p.AcquiredRecords {
		for o := a.FirstOffset; o <= a.LastOffset; o++ {
			out[o] = a.DeliveryCount
		}
	}
	return out
}

// topicID returns a topic's id from the metadata.
func topicID(t *testing.T, addr, topic string) [16]byte {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	td, err := adm.ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("list topic %s: %v %v", topic, err, td[topic].Err)
	}
	return td[topic].ID
}

// shareEarliest makes a share group start at the log start.
func shareEarliest(t *testing.T, addr, group string) {
	t.Helper()
	v := "earliest"
	if err := alterGroupConfig(t, newShareClient(t, addr), group, "share.auto.offset.reset", &v); err != nil {
		t.Fatalf("share.auto.offset.reset=earliest: %v", err)
	}
}

// produceValues produces values to partition 0 of a topic, synchronously.
func produceValues(t *testing.T, addr, topic string, values ...string) {
	t.Helper()
	cl := newShareClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// describeShareGroup describes one share group (ShareGroupDescribe).
func describeShareGroup(t *testing.T, addr, group string) kmsg.ShareGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrShareGroupDescribeRequest()
	req.GroupIDs = []string{group}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, newShareClient(t, addr))
	if err != nil {
		t.Fatalf("ShareGroupDescribe: %v", err)
	}
	g := resp.Groups[0]
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
		t.Fatalf("ShareGroupDescribe %s: %v", group, err)
	}
	return g
}

// describeShareOffsets returns a share-partition's start offset and lag
// (DescribeShareGroupOffsets v1).
func describeShareOffsets(t *testing.T, addr, group, topic string, partition int32) (start, lag int64) {
	t.Helper()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	req.Version = 1
	req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: group,
		Topics: []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: topic, Partitions: []int32{partition}}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, newShareClient(t, addr))
	if err != nil {
		t.Fatalf("DescribeShareGroupOffsets: %v", err)
	}
	g := resp.Groups[0]
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil || len(g.Topics) != 1 || len(g.Topics[0].Partitions) != 1 {
		t.Fatalf("DescribeShareGroupOffsets %s: %v %+v", group, err, g)
	}
	p := g.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		t.Fatalf("DescribeShareGroupOffsets %s/%d: %v", topic, partition, err)
	}
	return p.StartOffset, p.Lag
}
