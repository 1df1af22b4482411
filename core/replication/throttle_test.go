package replication

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
)

// throttledLeader answers follower fetches from a real leader partition
// with the leader side of the replication throttle, as the broker's replica
// fetch handler does (Throttle.LeaderHolds, then the bytes of a throttled
// replica recorded once per answer). It never long-polls, so a test drives
// it on a fake clock.
type throttledLeader struct {
	p  *partition.Partition
	th *Throttle
}

func (c *throttledLeader) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	freq, ok := req.(*kmsg.FetchRequest)
	if !ok {
		return nil, fmt.Errorf("unexpected request %T", req)
	}
	resp := freq.ResponseKind().(*kmsg.FetchResponse)
	for _, rt := range freq.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			if _, err := c.p.UpdateFollower(freq.ReplicaState.ID, rp.FetchOffset); err != nil {
				return nil, err
			}
			hold, counted := c.th.LeaderHolds(rt.Topic, rp.Partition, func() bool {
				v, ok := c.p.ReplicaView()
				return ok && slices.Contains(v.ISR, freq.ReplicaState.ID)
			})
			off := c.p.Offsets()
			sp.HighWatermark, sp.LogStartOffset = off.HighWatermark, off.LogStartOffset
			if !hold {
				res, err := c.p.ReadReplica(rp.FetchOffset, int(rp.PartitionMaxBytes))
				if err != nil {
					return nil, err
				}
				sp.HighWatermark, sp.LogStartOffset, sp.RecordBatches = res.HighWatermark, res.LogStartOffset, res.Records
				if counted {
					c.th.Leader.Record(len(res.Records))
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// bigBatch is one record of size bytes.
func bigBatch(t *testing.T, size int) []byte {
	t.Helper()
	b, err := record.Encode(record.BatchSpec{FirstTimestamp: t0.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]record.Record{{Value: make([]byte, size)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reassignment is a partition gaining replica 3: leader 1 holds ~1 MiB,
// the new replica starts empty outside the ISR, and both ends have a
// throttle on the fake clock.
type reassignment struct {
	c                   *clock
	leader, follower    *partition.Partition
	leaderTh, followTh  *Throttle
	fetcher             *Fetcher
	leaderLEO, logBytes int64
}

const throttleStep = 100 * time.Millisecond

func newReassignment(t *testing.T, limit int64) *reassignment {
	t.Helper()
	r := &reassignment{c: &clock{t: t0}}
	r.leader = openPartition(t, 1, r.c)
	r.follower = openPartition(t, 3, r.c)
	for _, p := range []*partition.Partition{r.leader, r.follower} {
		p.SetLeadershipEpochs(1, 1, 1, []int32{1, 3}, []int32{1})
	}
	for range 256 {
		b := bigBatch(t, 4000)
		if _, err := r.leader.Append(b); err != nil {
			t.Fatal(err)
		}
		r.logBytes += int64(len(b))
	}
	r.leaderLEO = r.leader.Offsets().LogEndOffset
	var err error
	if r.leaderTh, err = NewThrottle(DefaultQuotaConfig(), r.c.Now); err != nil {
		t.Fatal(err)
	}
	if r.followTh, err = NewThrottle(DefaultQuotaConfig(), r.c.Now); err != nil {
		t.Fatal(err)
	}
	// What kafka-reassign-partitions --throttle sets: the existing replica
	// throttled on the leader side, the new one on the follower side.
	r.leaderTh.Leader.SetThrottled(map[string]ThrottledPartitions{"t": {Partitions: []int32{0}}})
	r.followTh.Follower.SetThrottled(map[string]ThrottledPartitions{"t": {Partitions: []int32{0}}})
	r.setLimit(limit)
	cfg := DefaultFetcherConfig(3)
	cfg.PartitionMaxBytes = 64 << 10
	cfg.Quota = r.followTh.Follower
	r.fetcher = newFetcher(cfg, 1, &throttledLeader{p: r.leader, th: r.leaderTh}, r.c.Now, quiet)
	r.fetcher.set(map[partition.TopicPartition]followed{{Topic: "t", Partition: 0}: {p: r.follower, leaderEpoch: 1}})
	return r
}

func (r *reassignment) setLimit(limit int64) {
	r.leaderTh.Leader.SetLimit(limit)
	r.followTh.Follower.SetLimit(limit)
}

// run fetches once per step of simulated time for d.
func (r *reassignment) run(t *testing.T, d time.Duration) {
	t.Helper()
	for end := r.c.Now().Add(d); r.c.Now().Before(end); r.c.Advance(throttleStep) {
		if req, sent := r.fetcher.request(); req != nil {
			if err := r.fetcher.fetchOnce(context.Background(), req, sent); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// moved is the bytes the new replica has copied.
func (r *reassignment) moved() int64 { return r.followTh.Follower.Stats().Recorded }

func (r *reassignment) caughtUp() bool { return r.follower.Offsets().LogEndOffset == r.leaderLEO }

// TestThrottledReassignmentCatchUp: a replica added by a reassignment
// copies a ~1 MiB log at most at the throttle's rate (100 KiB/s, plus one
// fetch of 64 KiB of burst), measurably slower than without a throttle,
// and completes (the leader would add it to the ISR) once the throttle is
// removed. Time is simulated; the assertions are on the quotas' accounting.
func TestThrottledReassignmentCatchUp(t *testing.T) {
	const limit = 100 << 10
	const burst = 64 << 10

	free := newReassignment(t, Unthrottled)
	free.run(t, 2*time.Second)
	if !free.caughtUp() || free.moved() != free.logBytes {
		t.Fatalf("unthrottled: after 2 s moved %d of %d bytes, caught up %v", free.moved(), free.logBytes, free.caughtUp())
	}
	if got := free.leaderTh.Leader.Stats().Recorded; got != free.logBytes {
		t.Fatalf("unthrottled: the leader counted %d bytes, want %d", got, free.logBytes)
	}

	r := newReassignment(t, limit)
	var windows []int64 // bytes moved in each simulated second
	for sec := 1; sec <= 4; sec++ {
		before := r.moved()
		r.run(t, time.Second)
		windows = append(windows, r.moved()-before)
		if max := int64(limit)*int64(sec) + burst; r.moved() > max {
			t.Fatalf("throttled: after %d s moved %d bytes, above %d (rate limit times time plus one fetch)", sec, r.moved(), max)
		}
		if got := r.leaderTh.Leader.Stats().Recorded; got != r.moved() {
			t.Fatalf("throttled: the leader counted %d bytes, the follower %d", got, r.moved())
		}
	}
	t.Logf("throttled: bytes moved per simulated second %v (log %d bytes)", windows, r.logBytes)
	if r.caughtUp() || r.moved() >= r.logBytes/2 {
		t.Fatalf("throttled: after 4 s moved %d of %d bytes; the throttle did not hold back the catch-up", r.moved(), r.logBytes)
	}
	if r.moved() < 2*limit {
		t.Fatalf("throttled: after 4 s moved only %d bytes, far below the 100 KiB/s allowed", r.moved())
	}
	for i, w := range windows[1:] {
		// After the first burst, no second moves more than two fetches.
		if w > 2*burst {
			t.Errorf("second %d moved %d bytes", i+2, w)
		}
	}
	view, _ := r.leader.ReplicaView()
	if isr, changed := nextISR(view, r.c.Now(), 30*time.Second); changed || slices.Contains(isr, 3) {
		t.Fatalf("a lagging replica would join the ISR: %v", isr)
	}

	// Removing the throttle (kafka-reassign-partitions --verify does) lets
	// it finish; at its next fetch the leader sees it caught up.
	r.setLimit(Unthrottled)
	r.run(t, 2*time.Second)
	if !r.caughtUp() || r.moved() != r.logBytes {
		t.Fatalf("unthrottled again: moved %d of %d bytes, caught up %v", r.moved(), r.logBytes, r.caughtUp())
	}
	view, _ = r.leader.ReplicaView()
	if isr, changed := nextISR(view, r.c.Now(), 30*time.Second); !changed || !slices.Contains(isr, 3) {
		t.Fatalf("the caught-up replica would not join the ISR: %v (changed %v)", isr, changed)
	}
}

// TestThrottleSparesInSyncReplicas: a throttled replica in sync is fetched
// (follower side) and answered (leader side) even with the quota exceeded,
// so that a throttle cannot push a replica out of the ISR.
func TestThrottleSparesInSyncReplicas(t *testing.T) {
	r := newReassignment(t, Unthrottled)
	r.run(t, 2*time.Second)
	if !r.caughtUp() {
		t.Fatal("did not catch up")
	}
	// In the ISR now, with both quotas far exceeded.
	for _, p := range []*partition.Partition{r.leader, r.follower} {
		p.SetLeadershipEpochs(1, 1, 2, []int32{1, 3}, []int32{1, 3})
	}
	r.setLimit(1)
	if !r.followTh.Follower.Exceeded() || !r.leaderTh.Leader.Exceeded() {
		t.Fatal("quotas not exceeded")
	}
	if _, err := r.leader.Append(bigBatch(t, 4000)); err != nil {
		t.Fatal(err)
	}
	r.leaderLEO = r.leader.Offsets().LogEndOffset
	r.run(t, 2*throttleStep)
	if !r.caughtUp() {
		t.Fatalf("an in-sync replica was held back: log end %d, leader %d", r.follower.Offsets().LogEndOffset, r.leaderLEO)
	}

	// The follower side alone: out of sync (a new leader epoch forgets the
	// lag), the fetcher leaves the partition out of its request.
	r.fetcher.set(map[partition.TopicPartition]followed{{Topic: "t", Partition: 0}: {p: r.follower, leaderEpoch: 2}})
	if req, _ := r.fetcher.request(); req != nil {
		t.Fatalf("the fetcher asked for a throttled out-of-sync replica over its quota: %+v", req.Topics)
	}
	r.followTh.Follower.SetLimit(Unthrottled)
	if req, _ := r.fetcher.request(); req == nil {
		t.Fatal("the fetcher left out an unthrottled replica")
	}
}
