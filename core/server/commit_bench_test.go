package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkOffsetCommit is the latency of one OffsetCommit (one partition,
// outside group management) answered by an in-process coordinator, on one
// node and on three with __consumer_offsets replicated to all.
func BenchmarkOffsetCommit(b *testing.B) {
	for _, n := range []int32{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			nodes := startTestClusterOpts(b, n, nil, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var seeds []string
			for _, s := range nodes {
				seeds = append(seeds, s.KafkaAddr())
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			adm := kadm.NewClient(cl)
			// Until every node has registered.
			deadline := time.Now().Add(2 * time.Minute)
			for _, err := adm.CreateTopic(ctx, 1, int16(n), nil, "bench"); err != nil; _, err = adm.CreateTopic(ctx, 1, int16(n), nil, "bench") {
				if time.Now().After(deadline) {
					b.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			var topicID [16]byte // OffsetCommit v10 names topics by id
			commit := func(off int64) error {
				if topicID == ([16]byte{}) {
					if md, err := adm.Metadata(ctx, "bench"); err == nil {
						topicID = md.Topics["bench"].ID
					}
				}
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation = "bench", -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic, rt.TopicID = "bench", topicID
				rp := kmsg.NewOffsetCommitRequestTopicPartition()
				rp.Offset = off
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				resp, err := req.RequestWith(ctx, cl)
				if err != nil {
					return err
				}
				if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
					return fmt.Errorf("commit answered %d", code)
				}
				return nil
			}
			// Until the coordinator exists, is loaded and replicated.
			deadline = time.Now().Add(2 * time.Minute)
			for err := commit(0); err != nil; err = commit(0) {
				if time.Now().After(deadline) {
					b.Fatalf("no coordinator: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := commit(int64(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
