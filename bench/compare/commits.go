package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitCount is how many synchronous offset commits the latency rows time.
const commitCount = 2000

// commitLatencies times n OffsetCommit requests of one partition of topic, each sent once the
// previous one was answered, from one franz-go client to the group's coordinator: a group's
// write to __consumer_offsets (generation -1, as a consumer committing without a group
// membership), which Kafka acknowledges once the ISR has it. Commits until the coordinator
// answers (it loads the group's partition on first use) are not timed.
func commitLatencies(ctx context.Context, bootstrap, topic, group string, n int) ([]time.Duration, error) {
	cl, err := client(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("metadata %s: %w", topic, err)
	}
	topicID := md.Topics[topic].ID // OffsetCommit v10 names topics by id only
	commit := func(off int64) error {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = group, -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = off
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("offset commit answered %d topics", len(resp.Topics))
		}
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	deadline := time.Now().Add(60 * time.Second)
	for err := commit(0); err != nil; err = commit(0) {
		if time.Now().After(deadline) || !kerr.IsRetriable(err) {
			return nil, fmt.Errorf("first offset commit to %s: %w", group, err)
		}
		time.Sleep(50 * time.Millisecond) // polling the coordinator's load, not synchronisation
	}
	lats := make([]time.Duration, 0, n)
	for i := 1; i <= n; i++ {
		start := time.Now()
		if err := commit(int64(i)); err != nil {
			return nil, fmt.Errorf("offset commit %d of %d: %w", i, n, err)
		}
		lats = append(lats, time.Since(start))
	}
	return lats, nil
}

// measureCommits records the p50 and p99 of commitCount synchronous offset commits; prefix
// names the section (empty for a single node, clusterPrefix on three).
func measureCommits(ctx context.Context, t target, prefix string, rf int16, scale float64, record recordFn) error {
	topic := "bench-commit"
	var err error
	if rf > 1 {
		err = createClusterTopic(ctx, t.bootstrap, topic, 1)
	} else {
		err = createTopic(ctx, t.bootstrap, topic, 1)
	}
	if err != nil {
		return err
	}
	n := max(200, int(float64(commitCount)*min(1, scale)))
	lats, err := commitLatencies(ctx, t.bootstrap, topic, "bench-commit", n)
	if err != nil {
		return fmt.Errorf("offset commit latency: %w", err)
	}
	sortDurations(lats)
	for _, q := range []struct {
		name string
		p    float64
	}{{"p50", 0.50}, {"p99", 0.99}} {
		record(t.name, fmt.Sprintf("%sfranz-go OffsetCommit latency, 1 partition, synchronous, %s", prefix, q.name),
			"ms", "lower", percentile(lats, q.p))
	}
	return nil
}

// measureAgainst measures a broker or cluster that is already running (--against), without
// starting or stopping anything and without Apache Kafka: with 3 nodes the cluster section
// and its offset commit rows (the commit rows alone with --cluster=false), with 1 the
// single-node offset commit rows. Each row is printed as it is measured, tab-separated:
// metric, unit, value. For before/after runs of two Gregor binaries on the same machine.
func measureAgainst(bootstrap string, nodes int, o options) error {
	t := target{name: "gregor", bootstrap: bootstrap, cluster: nodes > 1}
	record := func(_, metric, unit, _ string, v float64) {
		fmt.Printf("%s\t%s\t%.3f\n", metric, unit, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if nodes > 1 {
		if o.cluster { // --cluster=false: the offset commit rows alone
			if err := measureCluster(t, o, record); err != nil {
				return err
			}
		}
		return measureCommits(ctx, t, clusterPrefix, clusterRF, o.scale, record)
	}
	return measureCommits(ctx, t, "", 1, o.scale, record)
}

// awaitBrokers polls metadata until it lists nodes brokers (a node registers a moment after it
// listens).
func awaitBrokers(bootstrap string, nodes int) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := brokerCount(bootstrap)
		if err == nil && n == nodes {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("compare: --against %s: not %d brokers within 60 s (%d, %v)", bootstrap, nodes, n, err)
		}
		time.Sleep(100 * time.Millisecond) // polling the cluster's registration, not synchronisation
	}
}

// brokerCount asks with a fresh client each time: one client's later requests can keep going
// to a seed that has not yet seen every registration.
func brokerCount(bootstrap string) (int, error) {
	cl, err := client(bootstrap)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	return len(md.Brokers), err
}
