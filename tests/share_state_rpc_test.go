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

	"github.com/gregorbroker/gregor/core/share"
	"github.com/gregorbroker/gregor/core/share/coordinator"
)

// stateRPC sends one share-state request to a broker and fails the test
// when it does not arrive.
func stateRPC(t *testing.T, cl kmsg.Requestor, req kmsg.Request) kmsg.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := cl.Request(ctx, req)
	if err != nil {
		t.Fatalf("%T: %v", req, err)
	}
	return resp
}

type stateBatch struct {
	first, last int64
	state       int8
	count       int16
}

func writeState(t *testing.T, cl kmsg.Requestor, group string, id [16]byte, stateEpoch, leaderEpoch int32, start int64, batches ...stateBatch) error {
	t.Helper()
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.Version = 1
	req.GroupID = group
	rp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = stateEpoch, leaderEpoch, start
	for _, b := range batches {
		rp.StateBatches = append(rp.StateBatches, kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch{
			FirstOffset: b.first, LastOffset: b.last, DeliveryState: b.state, DeliveryCount: b.count})
	}
	rt := kmsg.NewWriteShareGroupStateRequestTopic()
	rt.TopicID, rt.Partitions = id, append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := stateRPC(t, cl, req).(*kmsg.WriteShareGroupStateResponse)
	return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
}

func readState(t *testing.T, cl kmsg.Requestor, group string, id [16]byte, leaderEpoch int32) (kmsg.ReadShareGroupStateResponseTopicPartition, error) {
	t.Helper()
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = group
	rp := kmsg.NewReadShareGroupStateRequestTopicPartition()
	rp.LeaderEpoch = leaderEpoch
	rt := kmsg.NewReadShareGroupStateRequestTopic()
	rt.TopicID, rt.Partitions = id, append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := stateRPC(t, cl, req).(*kmsg.ReadShareGroupStateResponse)
	p := resp.Topics[0].Partitions[0]
	return p, kerr.ErrorForCode(p.ErrorCode)
}

func stateBatchesOf(p kmsg.ReadShareGroupStateResponseTopicPartition) []stateBatch {
	var out []stateBatch
	for _, b := range p.StateBatches {
		out = append(out, stateBatch{b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount})
	}
	return out
}

// The share-state RPCs (83-87) against one broker: writes merge into the
// stored state as Kafka's share coordinator merges them, reads fence older
// share-partition leaders, initialization starts a new state epoch and
// fences older ones, summaries count what is complete, deletes forget.
func TestShareStateRPCs(t *testing.T) {
	b := startBroker(t, shareConfig)
	topic, group := "share-state-rpc", "sg-state-rpc"
	createTopic(t, b.Addr, topic, 1, nil)
	id := topicID(t, b.Addr, topic)
	cl := newShareClient(t, b.Addr)

	// Before any share group used it, __share_group_state does not exist.
	if err := writeState(t, cl, group, id, 0, 1, 0); err != kerr.CoordinatorNotAvailable {
		t.Fatalf("write before the state topic exists: %v, want COORDINATOR_NOT_AVAILABLE", err)
	}
	// A share fetch creates it.
	m := newRawShareMember(t, b.Addr, "sg-state-rpc-warmup", "w")
	m.join(topic)
	m.fetch(id, 0, 0)
	eventually(t, 30*time.Second, "the state topic", func() error {
		return writeState(t, cl, group, id, 0, 1, 0)
	})

	const avail, acked, archived = 0, 2, 4
	if err := writeState(t, cl, group, id, 0, 1, 0, stateBatch{0, 4, acked, 1}, stateBatch{5, 9, avail, 2}); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := writeState(t, cl, group, id, 0, 1, -1, stateBatch{3, 6, archived, 3}); err != nil {
		t.Fatalf("write a delta: %v", err)
	}
	p, err := readState(t, cl, group, id, 1)
	want := []stateBatch{{0, 2, acked, 1}, {3, 6, archived, 3}, {7, 9, avail, 2}}
	if err != nil || p.StartOffset != 0 || p.StateEpoch != 0 || fmt.Sprint(stateBatchesOf(p)) != fmt.Sprint(want) {
		t.Fatalf("read: %v start %d epoch %d %v, want start 0 epoch 0 %v", err, p.StartOffset, p.StateEpoch, stateBatchesOf(p), want)
	}
	// A newer leader reads; the older one is fenced from then on.
	if _, err := readState(t, cl, group, id, 3); err != nil {
		t.Fatalf("read in leader epoch 3: %v", err)
	}
	if _, err := readState(t, cl, group, id, 2); err != kerr.FencedLeaderEpoch {
		t.Fatalf("read in leader epoch 2 after 3: %v, want FENCED_LEADER_EPOCH", err)
	}
	if err := writeState(t, cl, group, id, 0, 2, 4); err != kerr.FencedLeaderEpoch {
		t.Fatalf("write in leader epoch 2 after 3: %v, want FENCED_LEADER_EPOCH", err)
	}
	// The start offset moves: what lies below it goes.
	if err := writeState(t, cl, group, id, 0, 3, 5); err != nil {
		t.Fatalf("move the start offset: %v", err)
	}
	p, _ = readState(t, cl, group, id, 3)
	want = []stateBatch{{5, 6, archived, 3}, {7, 9, avail, 2}}
	if p.StartOffset != 5 || fmt.Sprint(stateBatchesOf(p)) != fmt.Sprint(want) {
		t.Fatalf("after the move: start %d %v, want 5 %v", p.StartOffset, stateBatchesOf(p), want)
	}

	sum := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	sum.Version, sum.GroupID = 1, group
	sum.Topics = []kmsg.ReadShareGroupStateSummaryRequestTopic{{TopicID: id,
		Partitions: []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{Partition: 0, LeaderEpoch: 3}}}}
	sp := stateRPC(t, cl, sum).(*kmsg.ReadShareGroupStateSummaryResponse).Topics[0].Partitions[0]
	if sp.ErrorCode != 0 || sp.StartOffset != 5 || sp.LeaderEpoch != 3 || sp.DeliveryCompleteCount != 2 {
		t.Fatalf("summary: %+v, want start 5, leader epoch 3, 2 complete", sp)
	}

	// Initialization starts a new state epoch with nothing in flight.
	ini := kmsg.NewPtrInitializeShareGroupStateRequest()
	ini.GroupID = group
	ini.Topics = []kmsg.InitializeShareGroupStateRequestTopic{{TopicID: id,
		Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: 0, StateEpoch: 1, StartOffset: 8}}}}
	if ip := stateRPC(t, cl, ini).(*kmsg.InitializeShareGroupStateResponse).Topics[0].Partitions[0]; ip.ErrorCode != 0 {
		t.Fatalf("initialize: %v", kerr.ErrorForCode(ip.ErrorCode))
	}
	p, _ = readState(t, cl, group, id, 3)
	if p.StartOffset != 8 || p.StateEpoch != 1 || len(p.StateBatches) != 0 {
		t.Fatalf("after initialize: start %d epoch %d %v, want 8, 1, none", p.StartOffset, p.StateEpoch, stateBatchesOf(p))
	}
	if err := writeState(t, cl, group, id, 0, 3, 9); err != kerr.FencedStateEpoch {
		t.Fatalf("write in state epoch 0 after 1: %v, want FENCED_STATE_EPOCH", err)
	}
	ini.Topics[0].Partitions[0].StateEpoch = 0
	if ip := stateRPC(t, cl, ini).(*kmsg.InitializeShareGroupStateResponse).Topics[0].Partitions[0]; ip.ErrorCode != kerr.FencedStateEpoch.Code {
		t.Fatalf("initialize in state epoch 0 after 1: %v, want FENCED_STATE_EPOCH", kerr.ErrorForCode(ip.ErrorCode))
	}

	del := kmsg.NewPtrDeleteShareGroupStateRequest()
	del.GroupID = group
	del.Topics = []kmsg.DeleteShareGroupStateRequestTopic{{TopicID: id,
		Partitions: []kmsg.DeleteShareGroupStateRequestTopicPartition{{Partition: 0}}}}
	if dp := stateRPC(t, cl, del).(*kmsg.DeleteShareGroupStateResponse).Topics[0].Partitions[0]; dp.ErrorCode != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(dp.ErrorCode))
	}
	p, err = readState(t, cl, group, id, 0)
	if err != nil || p.StartOffset != -1 || p.StateEpoch != 0 || len(p.StateBatches) != 0 {
		t.Fatalf("after delete: %v start %d epoch %d, want start -1 epoch 0", err, p.StartOffset, p.StateEpoch)
	}

	if _, err := readState(t, cl, group, [16]byte{1, 2, 3}, 0); err != kerr.UnknownTopicOrPartition {
		t.Fatalf("read of an unknown topic: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
	if _, err := readState(t, cl, "", id, 0); err != kerr.InvalidRequest {
		t.Fatalf("read without a group id: %v, want INVALID_REQUEST", err)
	}
}

// In a 3-node cluster where the share-partition leader and the leader of
// its __share_group_state partition are different brokers, the state the
// share-partition writes reaches the share coordinator (WriteShareGroupState
// between them), which serves it; the other brokers answer NOT_COORDINATOR.
func TestShareStateOnAnotherBroker(t *testing.T) {
	nodes := startCluster(t, 3, shareConfig)
	var seeds []string
	for _, nd := range nodes {
		seeds = append(seeds, nd.addr)
	}
	cl := newShareClient(t, seeds[0], kgo.SeedBrokers(seeds...))
	adm := kadm.NewClient(cl)
	topic := "share-state-remote"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	produceValues(t, seeds[0], topic, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	id := topicID(t, seeds[0], topic)
	leader := partitionLeader(t, adm, topic)

	// A first share group creates __share_group_state.
	warm := &rawShareMember{t: t, cl: newShareClient(t, seeds[0], kgo.SeedBrokers(seeds...)), group: "sg-remote-warmup", id: "w"}
	eventually(t, 30*time.Second, "the warm-up member joins", func() error { return warm.joinCluster(topic) })
	eventually(t, 30*time.Second, "the state topic", func() error {
		_, err := warm.fetchAt(leader, id, 0)
		if err != nil {
			warm.session = 0
		}
		return err
	})
	var group string
	var stateLeader int32
	eventually(t, 30*time.Second, "a group whose state another broker leads", func() error {
		md, err := adm.Metadata(ctx, share.StateTopic)
		if err != nil {
			return err
		}
		parts := md.Topics[share.StateTopic].Partitions
		if len(parts) == 0 {
			return fmt.Errorf("no %s partitions yet", share.StateTopic)
		}
		for i := 0; i < 1000; i++ {
			g := fmt.Sprintf("sg-remote-%d", i)
			idx := coordinator.StateTopicPartition(share.PartitionKey{Group: g, TopicPartition: share.TopicPartition{TopicID: id}}, int32(len(parts)))
			if l := parts[idx].Leader; l >= 0 && l != leader {
				group, stateLeader = g, l
				return nil
			}
		}
		return fmt.Errorf("every state partition is led by %d", leader)
	})
	shareEarliest(t, seeds[0], group)
	// Group configs reach the other brokers with the metadata image; the
	// share-partition leader reads share.auto.offset.reset when it first
	// initializes the share-partition, so wait until it has the config.
	eventually(t, 30*time.Second, "the share-partition leader sees share.auto.offset.reset=earliest", func() error {
		req := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		req.Resources = append(req.Resources, rr)
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		resp, err := req.RequestWith(rctx, cl.Broker(int(leader)))
		if err != nil {
			return err
		}
		for _, c := range resp.Resources[0].Configs {
			if c.Name == "share.auto.offset.reset" && c.Value != nil && *c.Value == "earliest" {
				return nil
			}
		}
		return fmt.Errorf("not yet")
	})
	m := &rawShareMember{t: t, cl: newShareClient(t, seeds[0], kgo.SeedBrokers(seeds...)), group: group, id: "m1"}
	eventually(t, 30*time.Second, "m1 joins", func() error { return m.joinCluster(topic) })
	eventually(t, 30*time.Second, "records acquired from the leader", func() error {
		p, err := m.fetchAt(leader, id, 0)
		if err != nil {
			m.session = 0
			return err
		}
		if got := acquiredOffsets(p); len(got) != 10 {
			return fmt.Errorf("acquired %v", got)
		}
		return nil
	})
	if p, err := m.fetchAt(leader, id, 0, rawAck{0, 4, 1}); err != nil || p.AcknowledgeErrorCode != 0 {
		t.Fatalf("accept 0-4: %v %v", err, kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}

	// The share coordinator holds what the share-partition leader wrote:
	// 0-4 acknowledged (below the start offset), 5-9 delivered once.
	p, err := readState(t, cl.Broker(int(stateLeader)), group, id, -1)
	want := []stateBatch{{5, 9, 0, 1}}
	if err != nil || p.StartOffset != 5 || fmt.Sprint(stateBatchesOf(p)) != fmt.Sprint(want) {
		t.Fatalf("state at coordinator %d: %v start %d %v, want start 5 %v", stateLeader, err, p.StartOffset, stateBatchesOf(p), want)
	}
	for nid := range nodes {
		if nid == stateLeader {
			continue
		}
		if _, err := readState(t, cl.Broker(int(nid)), group, id, -1); err != kerr.NotCoordinator {
			t.Fatalf("read at broker %d, not the share coordinator: %v, want NOT_COORDINATOR", nid, err)
		}
	}
	// A newer share-partition leader reads the state: the current one is
	// fenced and its acknowledgements fail rather than being lost.
	_, epoch := leaderEpochOf(t, adm, topic)
	if _, err := readState(t, cl.Broker(int(stateLeader)), group, id, epoch+1); err != nil {
		t.Fatalf("read in leader epoch %d: %v", epoch+1, err)
	}
	if err := writeState(t, cl.Broker(int(stateLeader)), group, id, 0, epoch, 5); err != kerr.FencedLeaderEpoch {
		t.Fatalf("write in leader epoch %d after %d: %v, want FENCED_LEADER_EPOCH", epoch, epoch+1, err)
	}
	if p, err := m.fetchAt(leader, id, 0, rawAck{5, 9, 1}); err != nil || p.AcknowledgeErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("accept 5-9 by a fenced leader: %v %v, want KAFKA_STORAGE_ERROR", err, kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}
}

func leaderEpochOf(t *testing.T, adm *kadm.Client, topic string) (int32, int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	p := md.Topics[topic].Partitions[0]
	return p.Leader, p.LeaderEpoch
}
