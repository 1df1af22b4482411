package replication

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
)

// leaderClient answers follower fetches from a real leader partition the way
// the broker's replica fetch handler does: divergence by leader epoch, the
// fetch offset recorded as the follower's log end, records up to the log end,
// and a bounded long poll when there is nothing new.
type leaderClient struct {
	p        *partition.Partition
	mu       sync.Mutex
	diverged int // DivergingEpoch answers sent
}

func (c *leaderClient) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	freq, ok := req.(*kmsg.FetchRequest)
	if !ok || len(freq.Topics) != 1 || len(freq.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("unexpected request %T", req)
	}
	rp := freq.Topics[0].Partitions[0]
	resp := freq.ResponseKind().(*kmsg.FetchResponse)
	st := kmsg.NewFetchResponseTopic()
	st.Topic = freq.Topics[0].Topic
	sp := kmsg.NewFetchResponseTopicPartition()
	sp.Partition = rp.Partition
	defer func() {
		st.Partitions = append(st.Partitions, sp)
		resp.Topics = append(resp.Topics, st)
	}()
	if rp.LastFetchedEpoch >= 0 {
		epoch, end := c.p.Log().EndOffsetForEpoch(rp.LastFetchedEpoch)
		if epoch >= 0 && (end < rp.FetchOffset || epoch < rp.LastFetchedEpoch) {
			sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = epoch, end
			c.mu.Lock()
			c.diverged++
			c.mu.Unlock()
			return resp, nil
		}
	}
	changed := c.p.HighWatermarkChanged()
	if _, err := c.p.UpdateFollower(freq.ReplicaState.ID, rp.FetchOffset); err != nil {
		return nil, err
	}
	res, err := c.p.ReadReplica(rp.FetchOffset, int(rp.PartitionMaxBytes))
	if err != nil {
		return nil, err
	}
	if len(res.Records) == 0 {
		t := time.NewTimer(time.Duration(freq.MaxWaitMillis) * time.Millisecond)
		defer t.Stop()
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	sp.HighWatermark, sp.LogStartOffset = res.HighWatermark, res.LogStartOffset
	sp.RecordBatches = res.Records
	return resp, nil
}

func epochBatch(t *testing.T, base int64, epoch int32, n int) []byte {
	t.Helper()
	b := testBatch(t, n)
	record.SetBaseOffset(b, base)
	record.SetPartitionLeaderEpoch(b, epoch)
	return b
}

// waitFor blocks until cond holds, woken by p's changes, or fails after a
// generous deadline.
func waitFor(t *testing.T, p *partition.Partition, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		ch := p.HighWatermarkChanged()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestFetcherTruncatesAndCatchesUp: a follower holding an old leader's
// unreplicated tail is truncated by leader epochs, copies the new leader's
// batches byte for byte, and its fetches advance the leader's high watermark.
func TestFetcherTruncatesAndCatchesUp(t *testing.T) {
	c := &clock{t: t0}
	leader := openPartition(t, 1, c)
	follower := openPartition(t, 2, c)
	leader.SetLeadershipEpochs(1, 1, 0, []int32{1, 2}, []int32{1, 2})
	if _, err := leader.Append(testBatch(t, 4)); err != nil {
		t.Fatal(err)
	}
	r, err := leader.ReadReplica(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := follower.AppendAsFollower(r.Records); err != nil {
		t.Fatal(err)
	}
	// The old leader's tail: epoch 1, offsets 4-5, never on the new leader.
	if _, err := follower.AppendAsFollower(epochBatch(t, 4, 1, 2)); err != nil {
		t.Fatal(err)
	}
	// Leadership moves on to epoch 2 and the leader writes offsets 4-6.
	leader.SetLeadershipEpochs(1, 2, 1, []int32{1, 2}, []int32{1, 2})
	follower.SetLeadershipEpochs(1, 2, 1, []int32{1, 2}, []int32{1, 2})
	if _, err := leader.Append(testBatch(t, 3)); err != nil {
		t.Fatal(err)
	}

	cfg := DefaultFetcherConfig(2)
	cfg.MaxWait, cfg.Backoff = 50*time.Millisecond, 10*time.Millisecond
	lc := &leaderClient{p: leader}
	f := newFetcher(cfg, 1, lc, time.Now, quiet)
	f.set(map[partition.TopicPartition]followed{{Topic: "t", Partition: 0}: {p: follower, leaderEpoch: 2}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.run(ctx) }()
	defer func() { cancel(); <-done }()

	waitFor(t, leader, "the leader's high watermark to reach 7", func() bool { return leader.Offsets().HighWatermark == 7 })
	waitFor(t, follower, "the follower's high watermark to reach 7", func() bool { return follower.Offsets().HighWatermark == 7 })
	lb, err := leader.ReadReplica(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := follower.ReadReplica(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(lb.Records, fb.Records) {
		t.Fatalf("follower log differs from the leader's (%d vs %d bytes)", len(fb.Records), len(lb.Records))
	}
	lc.mu.Lock()
	if lc.diverged != 1 {
		t.Fatalf("%d diverging answers, want 1", lc.diverged)
	}
	lc.mu.Unlock()
	if _, e := follower.FetchPosition(); e != 2 {
		t.Fatalf("follower's last epoch %d, want 2", e)
	}
}
