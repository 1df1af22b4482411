package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// gatePartitioner is a placement extension that holds the check of a
// record keyed "race" until released: the point of a produce after its
// leadership check and before its append.
type gatePartitioner struct {
	entered chan struct{}
	release chan struct{}
}

func (g *gatePartitioner) PartitionBatch(records []partitioner.Record, n int32, out []int32) error {
	if err := partitioner.CheckBatch(records, n, out); err != nil {
		return err
	}
	for i, r := range records {
		if string(r.Key) == "race" {
			g.entered <- struct{}{}
			<-g.release
		}
		out[i] = 0
	}
	return nil
}

func rawProduce(t *testing.T, ctx context.Context, cl *kgo.Broker, topic string, id [16]byte, key string) (*kmsg.ProduceResponse, error) {
	t.Helper()
	batch, err := record.Encode(record.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		FirstTimestamp: time.Now().UnixMilli()}, []record.Record{{Key: []byte(key), Value: []byte(key)}})
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 10000 // kgo sends its client's acks
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	// Sent to this broker as it is: a sharded client request would follow
	// the leadership on its own.
	resp, err := cl.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.ProduceResponse), nil
}

// TestProduceRacingLeaderChange: a produce admitted while this broker led
// the partition, whose append comes after leadership moved to another
// broker (here: while the placement extension checks it), appends nothing
// and answers NOT_LEADER_OR_FOLLOWER. Before the append was fenced by the
// admitted leader epoch, the old leader appended it as a follower and
// answered success.
func TestProduceRacingLeaderChange(t *testing.T) {
	gate := &gatePartitioner{entered: make(chan struct{}), release: make(chan struct{})}
	nodes := startTestClusterOpts(t, 3, func(_ int32, cfg *config.Config) {
		cfg.Extensions = map[string]config.Extension{"gate": {Kind: config.KindPartitioner, Exec: "unused"}}
	}, func(_ int32, o *Options) {
		o.Partitioners = map[string]partitioner.BatchPartitioner{"gate": gate}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var seeds []string
	for _, s := range nodes {
		seeds = append(seeds, s.KafkaAddr())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	poll(t, ctx, "three brokers", func() error {
		md, err := adm.Metadata(ctx)
		if err != nil || len(md.Brokers) != 3 {
			return fmt.Errorf("metadata: %v, %d brokers", err, len(md.Brokers))
		}
		return nil
	})
	enforce := map[string]*string{"gregor.partitioner": kadm.StringPtr("gate"), "gregor.partitioner.enforce": kadm.StringPtr("true")}
	if _, err := adm.CreateTopic(ctx, 1, 3, enforce, "raced"); err != nil {
		t.Fatal(err)
	}
	var pm kadm.PartitionDetail
	var topicID [16]byte
	poll(t, ctx, "raced-0 with a full ISR", func() error {
		md, err := adm.Metadata(ctx, "raced")
		if err != nil {
			return err
		}
		pm, topicID = md.Topics["raced"].Partitions[0], md.Topics["raced"].ID
		if pm.Leader < 0 || len(pm.ISR) != 3 {
			return fmt.Errorf("leader %d ISR %v", pm.Leader, pm.ISR)
		}
		return nil
	})
	leader := nodes[pm.Leader]
	// acks=1: the client's setting is what goes on the wire; an
	// acks=all produce would fail in its ISR wait even when appended.
	acks1 := []kgo.Opt{kgo.SeedBrokers(leader.KafkaAddr()), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}
	lcl, err := kgo.NewClient(acks1...)
	if err != nil {
		t.Fatal(err)
	}
	defer lcl.Close()
	lb := lcl.Broker(int(pm.Leader))
	// Probes go on a connection of their own: a connection's answers come
	// in order, and the raced produce holds its connection.
	pcl, err := kgo.NewClient(acks1...)
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	pb := pcl.Broker(int(pm.Leader))
	// The metadata above may come from a broker whose image is ahead of the
	// leader's: the leader hosts the partition a moment later.
	poll(t, ctx, "a produce to raced-0 before the race", func() error {
		resp, err := rawProduce(t, ctx, lb, "raced", topicID, "before")
		if err != nil {
			return err
		}
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			return fmt.Errorf("error code %d", code)
		}
		return nil
	})

	type answer struct {
		resp *kmsg.ProduceResponse
		err  error
	}
	raced := make(chan answer, 1)
	go func() {
		resp, err := rawProduce(t, ctx, lb, "raced", topicID, "race")
		raced <- answer{resp, err}
	}()
	select {
	case <-gate.entered:
	case <-ctx.Done():
		t.Fatal("the produce never reached the placement check")
	}
	// Move the leadership while the produce is between admission and append.
	next := slices.DeleteFunc(slices.Clone(pm.Replicas), func(r int32) bool { return r == pm.Leader })
	order := append(next, pm.Leader)
	var ra kadm.AlterPartitionAssignmentsReq
	ra.Assign("raced", 0, order)
	if res, err := adm.AlterPartitionAssignments(ctx, ra); err != nil || res["raced"][0].Err != nil {
		t.Fatalf("AlterPartitionAssignments: %v %+v", err, res)
	}
	var es kadm.TopicsSet
	es.Add("raced", 0)
	poll(t, ctx, "leadership of raced-0 moved off the old leader", func() error {
		if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, es); err != nil {
			return err
		}
		// The old leader has applied it once it refuses a new produce.
		resp, err := rawProduce(t, ctx, pb, "raced", topicID, "probe")
		if err != nil {
			return err
		}
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
			return fmt.Errorf("probe answered %v", kerr.ErrorForCode(code))
		}
		return nil
	})
	close(gate.release)
	got := <-raced
	if got.err != nil {
		t.Fatal(got.err)
	}
	if m := got.resp.Topics[0].Partitions[0].ErrorMessage; m != nil {
		t.Logf("raced answer: %s", *m)
	}
	if code := got.resp.Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce that raced the leader change answered %v at offset %d, want NOT_LEADER_OR_FOLLOWER",
			kerr.ErrorForCode(code), got.resp.Topics[0].Partitions[0].BaseOffset)
	}
	// Nothing of it is in the partition, read from its new leader.
	ends, err := adm.ListEndOffsets(ctx, "raced")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("raced", 0)
	rcl, err := kgo.NewClient(kgo.SeedBrokers(seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"raced": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer rcl.Close()
	for read := int64(0); read < end.Offset; {
		fs := rcl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read = r.Offset + 1
			if string(r.Key) == "race" {
				t.Errorf("the raced record is at offset %d", r.Offset)
			}
		})
	}
}
