package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The restart section (issue 17): on a broker of its own, started fresh with a recovery-point
// checkpoint every restartCheckpointMs on both brokers,
//   - RSS with 0, 1,000 and startupPartitions idle partitions (KB per idle partition);
//   - startupMB of 1 KB records spread over those partitions, a clean stop (timed), a restart,
//     and the time from the new process's launch to the first acknowledged produce and to a
//     produce acknowledged on every partition;
// then on a second fresh broker, a one-partition log in restartSegmentBytes segments written
// up to each size of recoveryMB: once the recovery point written to the data dir has reached
// the active segment, recoveryTailMB more, kill -9 and a restart timed to the first
// acknowledged produce. Recovery should cost the tail past the recovery point, not the log.

const (
	// restartCheckpointMs is log.flush.offset.checkpoint.interval.ms (Kafka) and
	// log.flush_offset_checkpoint_interval_ms (Gregor) in the restart section: the rows wait for
	// a written recovery point, and Kafka's default of a minute would make them wait that long.
	restartCheckpointMs = 1000
	// restartSegmentBytes is the recovery topic's segment.bytes.
	restartSegmentBytes = 16 << 20
	// recoveryTailMB is what each kill -9 row writes after the recovery point was checkpointed.
	recoveryTailMB = 8
	// idleTopicPartitions is the most partitions one topic of the start-up rows gets: KRaft
	// refuses a CreateTopics that makes more than 10,000 metadata records at once.
	idleTopicPartitions = 1000
	recoveryTopic       = "bench-recovery"
)

// restartPlan is the section's size: partitions and data of the start-up rows, log sizes of
// the kill -9 rows (MB, ascending); zero values leave a part out.
type restartPlan struct {
	partitions int
	dataMB     int
	recoveryMB []int
}

// fitPartitions is the most idle partitions, want or fewer in steps of idleTopicPartitions,
// whose descriptors fit an open-file limit of limit: each broker holds one per partition (its
// active segment's .log; Gregor held three, with both index files, until it wrote them only at
// flushes), and the brokers need a few thousand besides (connections, the metadata log, Kafka's
// jars).
func fitPartitions(want int, limit uint64) int {
	const perPartition, besides = 1, 4000
	fit := (int(min(limit, 1<<30)) - besides) / perPartition
	if fit >= want {
		return want
	}
	return max(0, fit/idleTopicPartitions*idleTopicPartitions)
}

// parseSizesMB reads a comma-separated list of positive sizes in MB ("256,1024"), sorted
// ascending without repeats; "" is none.
func parseSizesMB(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("compare: size %q is not a positive number of MB", f)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// idleTopics splits total partitions into topics of at most idleTopicPartitions each.
func idleTopics(total int) []int32 {
	var out []int32
	for left := total; left > 0; left -= idleTopicPartitions {
		out = append(out, int32(min(left, idleTopicPartitions)))
	}
	return out
}

// rssSteps are the partition counts at which RSS is read: 0, 1,000 and total (fewer when
// total is at most 1,000).
func rssSteps(total int) []int {
	steps := []int{0}
	if total > idleTopicPartitions {
		steps = append(steps, idleTopicPartitions)
	}
	if total > 0 {
		steps = append(steps, total)
	}
	return steps
}

// measureRestart runs the section on target t; t.start and t.stop are the fresh start with
// the checkpoint interval and the clean stop.
func measureRestart(t target, p restartPlan, record recordFn, notes map[string]string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if p.partitions > 0 {
		if err := t.start(); err != nil {
			return err
		}
		err := measureStartup(ctx, t, p, record)
		t.stop()
		if err != nil {
			return fmt.Errorf("start-up rows: %w", err)
		}
	}
	if len(p.recoveryMB) > 0 {
		if err := t.start(); err != nil {
			return err
		}
		err := measureRecovery(ctx, t, p.recoveryMB, record, notes)
		t.stop()
		if err != nil {
			return fmt.Errorf("recovery rows: %w", err)
		}
	}
	return nil
}

// measureStartup records RSS against idle partitions, then fills them, stops cleanly and
// times the restart.
func measureStartup(ctx context.Context, t target, p restartPlan, record recordFn) error {
	topics := idleTopics(p.partitions)
	names := make([]string, len(topics))
	var base, rss float64
	var baseFiles, files int
	created := 0
	for _, n := range rssSteps(p.partitions) {
		for ; created < n; created += int(topics[created/idleTopicPartitions]) {
			i := created / idleTopicPartitions
			names[i] = fmt.Sprintf("bench-idle-%d", i)
			if err := createIdle(ctx, t.bootstrap, names[i], topics[i], nil); err != nil {
				return err
			}
		}
		var err error
		if rss, err = currentRSS(t.pidFile); err != nil {
			return err
		}
		if files, err = openFiles(t.pidFile); err != nil {
			return err
		}
		if n == 0 {
			base, baseFiles = rss, files
		}
		fmt.Fprintf(os.Stderr, "compare: %s %d idle partitions: RSS %.1f MiB, %d open files\n", t.name, n, rss, files)
		record(t.name, fmt.Sprintf("curve: broker RSS with %d idle partitions", n), "MiB", "lower", rss)
	}
	record(t.name, fmt.Sprintf("RSS per idle partition (%d partitions)", p.partitions), "KB", "lower", perItemKB(rss-base, p.partitions))
	record(t.name, fmt.Sprintf("open files per idle partition (%d partitions)", p.partitions), "files", "lower",
		float64(files-baseFiles)/float64(max(p.partitions, 1)))

	what := fmt.Sprintf("%d partitions, %d MB", p.partitions, p.dataMB)
	if p.dataMB > 0 {
		n := p.dataMB << 10 // 1 KB records
		if err := produceSpread(ctx, t.bootstrap, names, topics, n); err != nil {
			return fmt.Errorf("fill %s: %w", what, err)
		}
	}
	began := time.Now()
	t.stop()
	stopMs := float64(time.Since(began).Microseconds()) / 1000
	fmt.Fprintf(os.Stderr, "compare: %s clean stop with %s: %.0f ms\n", t.name, what, stopMs)
	record(t.name, "clean stop with "+what, "ms", "lower", stopMs)
	if err := t.restart(); err != nil {
		return err
	}
	first, err := firstProduceAfterLaunch(ctx, t, names[0], 0)
	if err != nil {
		return fmt.Errorf("restart with %s: %w", what, err)
	}
	all, err := allPartitionsServing(ctx, t, names, topics)
	if err != nil {
		return fmt.Errorf("restart with %s: %w", what, err)
	}
	fmt.Fprintf(os.Stderr, "compare: %s restart with %s: first produce %.0f ms, every partition %.0f ms\n", t.name, what, first, all)
	record(t.name, "restart with "+what+": process start to first acknowledged produce", "ms", "lower", first)
	record(t.name, "restart with "+what+": process start to a produce acknowledged on every partition", "ms", "lower", all)
	return nil
}

// measureRecovery writes the recovery topic up to each size, lets the recovery point reach
// the disk, writes the tail, kills the broker and times its restart.
func measureRecovery(ctx context.Context, t target, sizesMB []int, record recordFn, notes map[string]string) error {
	segBytes := strconv.Itoa(restartSegmentBytes)
	if err := createIdle(ctx, t.bootstrap, recoveryTopic, 1, map[string]*string{"segment.bytes": &segBytes}); err != nil {
		return err
	}
	partDir := filepath.Join(t.dataDir, recoveryTopic+"-0")
	written := 0
	for _, size := range sizesMB {
		if size > written {
			if err := produceSpread(ctx, t.bootstrap, []string{recoveryTopic}, []int32{1}, (size-written)<<10); err != nil {
				return err
			}
			written = size
		}
		rp, active, err := awaitRecoveryPoint(ctx, t.dataDir, partDir, 30*time.Second)
		if err != nil {
			return err
		}
		if err := produceSpread(ctx, t.bootstrap, []string{recoveryTopic}, []int32{1}, recoveryTailMB<<10); err != nil {
			return err
		}
		written += recoveryTailMB
		past, err := bytesFrom(partDir, rp)
		if err != nil {
			return err
		}
		if err := t.crash(); err != nil {
			return err
		}
		if err := t.restart(); err != nil {
			return err
		}
		ms, err := firstProduceAfterLaunch(ctx, t, recoveryTopic, 0)
		if err != nil {
			return fmt.Errorf("restart after kill -9 at %d MB: %w", size, err)
		}
		metric := fmt.Sprintf("kill -9 with a %d MB log: process start to first acknowledged produce", size)
		fmt.Fprintf(os.Stderr, "compare: %s kill -9 at %d MB (recovery point %d, active segment %d, %.1f MB past it): restart %.0f ms\n",
			t.name, size, rp, active, float64(past)/(1<<20), ms)
		record(t.name, metric, "ms", "lower", ms)
		note := fmt.Sprintf("%s: %.0f MB past the checkpointed recovery point", t.name, float64(past)/(1<<20))
		if notes[metric] != "" {
			note = notes[metric] + "; " + note
		}
		notes[metric] = note
	}
	return nil
}

// createIdle creates an unreplicated topic and writes one record to each partition, retrying
// while the broker still creates it (a large CreateTopics may answer before it is done).
func createIdle(ctx context.Context, bootstrap, topic string, parts int32, configs map[string]*string) error {
	cl, err := client(bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.UnknownTopicRetries(-1),
		kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	r, err := kadm.NewClient(cl).CreateTopic(ctx, parts, 1, configs, topic)
	if err == nil {
		err = r.Err
	}
	if err != nil && !errors.Is(err, kerr.RequestTimedOut) {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	prime := make([]*kgo.Record, parts)
	for p := range prime {
		prime[p] = &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte("prime")}
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := cl.ProduceSync(pctx, prime...).FirstErr(); err != nil {
		return fmt.Errorf("prime %s: %w", topic, err)
	}
	return nil
}

// produceSpread sends n random 1 KB records (acks=1) round-robin over every partition of the
// topics (parts[i] partitions in topics[i]).
func produceSpread(ctx context.Context, bootstrap string, topics []string, parts []int32, n int) error {
	cl, err := client(bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.MaxBufferedRecords(100000), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer cl.Close()
	targets := spreadTargets(topics, parts)
	recs := randomKeyed.records(1024, 1024)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	wg.Add(n)
	for i := 0; i < n; i++ {
		r := recs[i%len(recs)]
		r.Topic, r.Partition = targets[i%len(targets)].topic, targets[i%len(targets)].partition
		cl.Produce(ctx, &r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				firstErr = errors.Join(firstErr, err)
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	return firstErr
}

type topicPartition struct {
	topic     string
	partition int32
}

// spreadTargets lists every partition of the topics, interleaving the topics so that
// consecutive records go to different topics.
func spreadTargets(topics []string, parts []int32) []topicPartition {
	var out []topicPartition
	var most int32
	for _, p := range parts {
		most = max(most, p)
	}
	for p := int32(0); p < most; p++ {
		for i, t := range topics {
			if p < parts[i] {
				out = append(out, topicPartition{t, p})
			}
		}
	}
	return out
}

// launchedAt reads the launch time the start scripts write (Unix nanoseconds).
func launchedAt(t target) (time.Time, error) {
	b, err := os.ReadFile(t.startFile)
	if err != nil {
		return time.Time{}, err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", t.startFile, err)
	}
	return time.Unix(0, ns), nil
}

// alive reports whether the broker process of t runs.
func alive(t target) bool {
	pid, err := readPid(t.pidFile)
	return err == nil && syscall.Kill(pid, 0) == nil
}

// firstProduceAfterLaunch polls a broker that restart launched without waiting: a TCP connect
// every 5 ms until the listener accepts, then one produce at a time on a fresh client (so no
// client back-off stretches the figure) until one is acknowledged. It returns the time from
// the launch in ms.
func firstProduceAfterLaunch(ctx context.Context, t target, topic string, partition int32) (float64, error) {
	at, err := launchedAt(t)
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if !alive(t) {
			return 0, fmt.Errorf("%s exited during start-up", t.name)
		}
		c, err := net.DialTimeout("tcp", strings.Split(t.bootstrap, ",")[0], time.Second)
		if err != nil {
			time.Sleep(5 * time.Millisecond) // polling the listener, not synchronisation
			continue
		}
		c.Close()
		cl, err := client(t.bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(0), kgo.RequestRetries(0))
		if err != nil {
			return 0, err
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = cl.ProduceSync(pctx, &kgo.Record{Topic: topic, Partition: partition, Value: []byte("x")}).FirstErr()
		cancel()
		cl.Close()
		if err == nil {
			return float64(time.Since(at).Microseconds()) / 1000, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, fmt.Errorf("no produce to %s-%d acknowledged within 5 minutes", topic, partition)
}

// allPartitionsServing produces one record to every partition of the topics, again to those
// that failed, until each has acknowledged one; it returns the time from the launch in ms.
func allPartitionsServing(ctx context.Context, t target, topics []string, parts []int32) (float64, error) {
	at, err := launchedAt(t)
	if err != nil {
		return 0, err
	}
	cl, err := client(t.bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.UnknownTopicRetries(-1))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	pending := spreadTargets(topics, parts)
	deadline := time.Now().Add(5 * time.Minute)
	for len(pending) > 0 {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d partitions refused produces for 5 minutes", len(pending))
		}
		recs := make([]*kgo.Record, len(pending))
		for i, tp := range pending {
			recs[i] = &kgo.Record{Topic: tp.topic, Partition: tp.partition, Value: []byte("x")}
		}
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res := cl.ProduceSync(pctx, recs...)
		cancel()
		var failed []topicPartition
		for _, r := range res {
			if r.Err != nil {
				failed = append(failed, topicPartition{r.Record.Topic, r.Record.Partition})
			}
		}
		pending = failed
	}
	return float64(time.Since(at).Microseconds()) / 1000, nil
}

// awaitRecoveryPoint waits until the recovery point the broker wrote to dataDir for the
// partition in partDir has reached the base of its active segment, and returns both. When
// the wait runs out it returns what was written then: the row still runs, and its note says
// how much data lay past the recovery point.
func awaitRecoveryPoint(ctx context.Context, dataDir, partDir string, wait time.Duration) (int64, int64, error) {
	topic, part, err := splitPartitionDir(filepath.Base(partDir))
	if err != nil {
		return 0, 0, err
	}
	deadline := time.Now().Add(wait)
	for {
		active, err := activeSegmentBase(partDir)
		if err != nil {
			return 0, 0, err
		}
		b, err := os.ReadFile(filepath.Join(dataDir, "recovery-point-offset-checkpoint"))
		rp := int64(-1)
		if err == nil {
			rp = checkpointEntry(string(b), topic, part)
		}
		if rp >= active {
			return rp, active, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "compare: %s: checkpointed recovery point %d has not reached the active segment %d after %v\n", partDir, rp, active, wait)
			return max(rp, 0), active, nil
		}
		time.Sleep(50 * time.Millisecond) // polling the broker's checkpoint file
	}
}

// splitPartitionDir splits "<topic>-<partition>".
func splitPartitionDir(name string) (string, int32, error) {
	i := strings.LastIndexByte(name, '-')
	if i < 1 {
		return "", 0, fmt.Errorf("compare: %q is not a partition directory", name)
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 {
		return "", 0, fmt.Errorf("compare: %q is not a partition directory", name)
	}
	return name[:i], int32(p), nil
}

// checkpointEntry is a partition's offset in a Kafka offsets checkpoint file (a version line,
// a count line, then "<topic> <partition> <offset>" lines), -1 when it has none.
func checkpointEntry(text, topic string, partition int32) int64 {
	lines := strings.Split(text, "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "0" {
		return -1
	}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != topic || f[1] != strconv.Itoa(int(partition)) {
			continue
		}
		if off, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			return off
		}
	}
	return -1
}

// segmentBases lists the base offsets of a partition directory's .log files, ascending, with
// each file's size.
func segmentBases(partDir string) ([]int64, map[int64]int64, error) {
	entries, err := os.ReadDir(partDir)
	if err != nil {
		return nil, nil, fmt.Errorf("compare: %w", err)
	}
	var bases []int64
	sizes := map[int64]int64{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		b, err := strconv.ParseInt(strings.TrimSuffix(name, ".log"), 10, 64)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, nil, fmt.Errorf("compare: %w", err)
		}
		bases = append(bases, b)
		sizes[b] = info.Size()
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases, sizes, nil
}

// activeSegmentBase is the base offset of the partition's newest segment.
func activeSegmentBase(partDir string) (int64, error) {
	bases, _, err := segmentBases(partDir)
	if err != nil {
		return 0, err
	}
	if len(bases) == 0 {
		return 0, fmt.Errorf("compare: no segment in %s", partDir)
	}
	return bases[len(bases)-1], nil
}

// bytesFrom is the size of the segments recovery reads after a crash with recovery point rp:
// the one holding rp and all later ones.
func bytesFrom(partDir string, rp int64) (int64, error) {
	bases, sizes, err := segmentBases(partDir)
	if err != nil {
		return 0, err
	}
	var n int64
	for i, b := range bases {
		if i+1 < len(bases) && bases[i+1] <= rp {
			continue
		}
		n += sizes[b]
	}
	return n, nil
}
