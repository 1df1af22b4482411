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

// stateLeaderOf is the leader of the __share_group_state partition that
// holds a share-partition's state (-1: none yet).
func stateLeaderOf(adm *kadm.Client, group string, id [16]byte) (int32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, share.StateTopic)
	if err != nil {
		return -1, err
	}
	parts := md.Topics[share.StateTopic].Partitions
	if len(parts) == 0 {
		return -1, fmt.Errorf("no %s partitions yet", share.StateTopic)
	}
	idx := coordinator.StateTopicPartition(share.PartitionKey{Group: group, TopicPartition: share.TopicPartition{TopicID: id}}, int32(len(parts)))
	return parts[idx].Leader, nil
}

// A share group survives a failover of its __share_group_state partition
// in a 3-node cluster: the share coordinator leading it stops while a
// member holds records; the share-partition leader goes on writing to the
// new share coordinator, which has everything acknowledged before the
// failover (it was replicated) and after it; once the member is gone the
// records it did not acknowledge are delivered again, with delivery count
// 2, and nothing acknowledged is.
func TestShareGroupSurvivesStateLeaderFailover(t *testing.T) {
	nodes := startCluster(t, 3)
	var seeds []string
	for _, nd := range nodes {
		seeds = append(seeds, nd.addr)
	}
	cl := newShareClient(t, seeds[0], kgo.SeedBrokers(seeds...))
	adm := kadm.NewClient(cl)
	topic := "share-state-failover"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	produceValues(t, seeds[0], topic, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	id := topicID(t, seeds[0], topic)
	leader := partitionLeader(t, adm, topic)

	// A first share group creates __share_group_state; the group under
	// test is one whose state another broker than the data leader leads.
	warm := &rawShareMember{t: t, cl: newShareClient(t, seeds[0], kgo.SeedBrokers(seeds...)), group: "sg-state-failover-warmup", id: "w"}
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
		for i := 0; i < 1000; i++ {
			g := fmt.Sprintf("sg-state-failover-%d", i)
			l, err := stateLeaderOf(adm, g, id)
			if err != nil {
				return err
			}
			if l >= 0 && l != leader {
				group, stateLeader = g, l
				return nil
			}
		}
		return fmt.Errorf("every state partition is led by %d", leader)
	})
	shareEarliest(t, seeds[0], group)
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

	var rest []string
	for nid, nd := range nodes {
		if nid != stateLeader {
			rest = append(rest, nd.addr)
		}
	}
	m := &rawShareMember{t: t, cl: newShareClient(t, rest[0], kgo.SeedBrokers(rest...)), group: group, id: "m1"}
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

	nodes[stateLeader].stop(t)
	adm2 := kadm.NewClient(newShareClient(t, rest[0], kgo.SeedBrokers(rest...)))
	var newStateLeader int32
	eventually(t, 30*time.Second, "a new share coordinator", func() error {
		l, err := stateLeaderOf(adm2, group, id)
		if err != nil || l < 0 || l == stateLeader {
			return fmt.Errorf("state leader %d: %v", l, err)
		}
		newStateLeader = l
		return nil
	})
	// The member still holds 5-9 (a 30 s lock) and accepts 5-6 through
	// the new share coordinator.
	eventually(t, 20*time.Second, "5-6 accepted after the failover", func() error {
		p, err := m.fetchAt(leader, id, 0, rawAck{5, 6, 1})
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(p.AcknowledgeErrorCode)
	})
	p, err := readState(t, m.cl.Broker(int(newStateLeader)), group, id, -1)
	want := []stateBatch{{7, 9, 0, 1}}
	if err != nil || p.StartOffset != 7 || fmt.Sprint(stateBatchesOf(p)) != fmt.Sprint(want) {
		t.Fatalf("state at the new share coordinator %d: %v start %d %v, want start 7 %v", newStateLeader, err, p.StartOffset, stateBatchesOf(p), want)
	}

	// The member goes; what it held is delivered again, the rest never.
	m.cl.Close()
	m2 := &rawShareMember{t: t, cl: newShareClient(t, rest[0], kgo.SeedBrokers(rest...)), group: group, id: "m2"}
	eventually(t, 30*time.Second, "m2 joins", func() error { return m2.joinCluster(topic) })
	var got map[int64]int16
	eventually(t, 40*time.Second, "7-9 delivered again", func() error {
		p, err := m2.fetchAt(leader, id, 0)
		if err != nil {
			m2.session = 0
			return err
		}
		for o, d := range acquiredOffsets(p) {
			if got == nil {
				got = map[int64]int16{}
			}
			got[o] = d
		}
		if len(got) < 3 {
			return fmt.Errorf("acquired %v", got)
		}
		return nil
	})
	if fmt.Sprint(got) != fmt.Sprint(map[int64]int16{7: 2, 8: 2, 9: 2}) {
		t.Fatalf("after the state failover acquired %v, want 7, 8 and 9 at delivery count 2", got)
	}
}
