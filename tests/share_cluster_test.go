package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareFetchAt sends m's ShareFetch to one broker (the partition leader).
func (m *rawShareMember) fetchAt(broker int32, topicID [16]byte, partition int32, acks ...rawAck) (kmsg.ShareFetchResponseTopicPartition, error) {
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 2
	req.GroupID, req.MemberID = &m.group, &m.id
	req.ShareSessionEpoch = m.session
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = 500, 1, 1<<20, 500, 500
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
	resp, err := req.RequestWith(ctx, m.cl.Broker(int(broker)))
	if err != nil {
		return kmsg.ShareFetchResponseTopicPartition{}, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return kmsg.ShareFetchResponseTopicPartition{}, err
	}
	m.session++
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Partition == partition {
				return p, kerr.ErrorForCode(p.ErrorCode)
			}
		}
	}
	return kmsg.ShareFetchResponseTopicPartition{}, fmt.Errorf("partition missing from the answer")
}

// joinCluster joins m through its group's coordinator.
func (m *rawShareMember) joinCluster(topics ...string) error {
	ctx, cancel := m.ctx()
	defer cancel()
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{m.group}
	fr, err := fc.RequestWith(ctx, m.cl)
	if err != nil {
		return err
	}
	if len(fr.Coordinators) != 1 {
		return fmt.Errorf("FindCoordinator: %d answers", len(fr.Coordinators))
	}
	if err := kerr.ErrorForCode(fr.Coordinators[0].ErrorCode); err != nil {
		return err
	}
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.SubscribedTopicNames = m.group, m.id, topics
	resp, err := req.RequestWith(ctx, m.cl.Broker(int(fr.Coordinators[0].NodeID)))
	if err != nil {
		return err
	}
	m.epoch = resp.MemberEpoch
	return kerr.ErrorForCode(resp.ErrorCode)
}

func partitionLeader(t *testing.T, adm *kadm.Client, topic string) int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return -1
	}
	return md.Topics[topic].Partitions[0].Leader
}

// A share group keeps its state across a failover of the data partition's
// leader in a 3-node cluster: the new leader reads the share-partition
// back from __share_group_state (replicated to every node), so nothing
// acknowledged is delivered again and the rest is, with its delivery count.
func TestShareGroupSurvivesLeaderFailover(t *testing.T) {
	nodes := startCluster(t, 3)
	var seeds []string
	for _, nd := range nodes {
		seeds = append(seeds, nd.addr)
	}
	cl := newShareClient(t, seeds[0], kgo.SeedBrokers(seeds...))
	adm := kadm.NewClient(cl)
	topic, group := "share-failover", "sg-failover"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	shareEarliest(t, seeds[0], group)
	produceValues(t, seeds[0], topic, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	id := topicID(t, seeds[0], topic)
	leader := partitionLeader(t, adm, topic)
	m := &rawShareMember{t: t, cl: newShareClient(t, seeds[0], kgo.SeedBrokers(seeds...)), group: group, id: "m1"}
	eventually(t, 30*time.Second, "m1 joins", func() error { return m.joinCluster(topic) })
	var got map[int64]int16
	eventually(t, 30*time.Second, "records acquired from the leader", func() error {
		p, err := m.fetchAt(leader, id, 0)
		if err != nil {
			m.session = 0
			return err
		}
		got = acquiredOffsets(p)
		if len(got) != 10 {
			return fmt.Errorf("acquired %v", got)
		}
		return nil
	})
	if p, err := m.fetchAt(leader, id, 0, rawAck{0, 4, 1}); err != nil || p.AcknowledgeErrorCode != 0 {
		t.Fatalf("accept 0-4: %v %v", err, kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}
	nodes[leader].stop(t)
	var rest []string
	for id, nd := range nodes {
		if id != leader {
			rest = append(rest, nd.addr)
		}
	}
	cl2 := newShareClient(t, rest[0], kgo.SeedBrokers(rest...))
	adm2 := kadm.NewClient(cl2)
	var newLeader int32
	eventually(t, 30*time.Second, "a new leader", func() error {
		newLeader = partitionLeader(t, adm2, topic)
		if newLeader < 0 || newLeader == leader {
			return fmt.Errorf("leader %d", newLeader)
		}
		return nil
	})
	m2 := &rawShareMember{t: t, cl: newShareClient(t, rest[0], kgo.SeedBrokers(rest...)), group: group, id: "m2"}
	eventually(t, 30*time.Second, "m2 joins after the failover", func() error { return m2.joinCluster(topic) })
	eventually(t, 30*time.Second, "records redelivered by the new leader", func() error {
		p, err := m2.fetchAt(newLeader, id, 0)
		if err != nil {
			m2.session = 0
			return err
		}
		got = acquiredOffsets(p)
		if len(got) == 0 {
			return fmt.Errorf("nothing acquired")
		}
		return nil
	})
	want := map[int64]int16{5: 2, 6: 2, 7: 2, 8: 2, 9: 2}
	if len(got) != len(want) {
		t.Fatalf("after failover acquired %v, want %v", got, want)
	}
	for o, d := range want {
		if got[o] != d {
			t.Fatalf("after failover acquired %v, want %v", got, want)
		}
	}
}
