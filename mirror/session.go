package mirror

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// session is one connected run of a mirror: its clients and the partitions
// it started. A failed session is discarded whole and a new one resumes from
// the target.
type session struct {
	m      *Mirror
	cfg    Config
	src    *kgo.Client // admin and raw requests on the source
	dst    *kgo.Client // producer, admin and raw requests on the target
	srcAdm *kadm.Client
	dstAdm *kadm.Client
	// limits bound the batches dst (and a transactional copy's producer)
	// writes to each target topic.
	limits *targetLimits

	copier *copier // copy mode
	linker *linker // link mode

	// errs receives fatal errors from the session's goroutines.
	errs chan error

	// Owned by the session goroutine (run, refresh, checkpoint).
	started    map[topicPartition]bool
	topicSizes map[string]int32 // mirrored source topic → partitions started
	promoted   map[string]bool  // promoted target topics
	syncs      map[topicPartition][]OffsetSync
	aclsOff    bool
	// created are the source topics whose target topics this mirror
	// created (its provenance marks), for topics.sync_deletions.
	created  map[string]bool
	lastCkpt map[checkpointKey]int64
	// createdACLs are the target ACLs this mirror created (ACLsTopic),
	// loaded at the first ACL sync.
	createdACLs map[aclBinding]bool
	// statuses are the partition statuses this session recorded.
	statuses map[topicPartition]recordedStatus
}

type checkpointKey struct {
	group, topic string
	partition    int32
}

func newSession(ctx context.Context, m *Mirror) (*session, error) {
	s := &session{
		m: m, cfg: m.cfg, errs: make(chan error, 1),
		started: map[topicPartition]bool{}, topicSizes: map[string]int32{}, promoted: map[string]bool{},
		lastCkpt: map[checkpointKey]int64{}, limits: newTargetLimits(),
	}
	var err error
	if s.src, err = newClient(m.cfg.Source, "gregor-mirror-"+m.cfg.Target.Name); err != nil {
		return nil, err
	}
	s.srcAdm = kadm.NewClient(s.src)
	s.dst, err = newClient(m.cfg.Target, "gregor-mirror-"+m.cfg.Source.Name,
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchMaxBytesFn(s.limits.batchMax),
		kgo.MaxBufferedRecords(50000),
	)
	if err != nil {
		s.src.Close()
		return nil, err
	}
	s.dstAdm = kadm.NewClient(s.dst)
	if err := s.ensureInternalTopics(ctx); err != nil {
		s.close()
		return nil, err
	}
	// Before anything is written: the producer learns a topic's batch
	// limit at its first write.
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s.loadBrokerLimit(lctx)
	var internal []string
	for _, it := range s.internalTopics() {
		internal = append(internal, it.name)
	}
	if err := s.loadTopicLimits(lctx, internal); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *session) close() {
	if s.copier != nil {
		// Record where each partition is, so that a restart resumes
		// without re-reading. Briefly: the target may be going away too
		// (a mirror inside the target broker), and a restart reconciles.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s.copier.close(ctx)
		_ = s.dst.Flush(ctx)
		s.copier.syncIdle()
		_ = s.dst.Flush(ctx)
		cancel()
	}
	if s.linker != nil {
		s.linker.stop()
	}
	s.src.Close()
	s.dst.Close()
}

// report hands a fatal error to the session loop without blocking.
func (s *session) report(err error) {
	select {
	case s.errs <- err:
	default:
	}
}

// internalTopic is a bookkeeping topic the mirror keeps on the target.
type internalTopic struct {
	name    string
	configs map[string]*string
}

func strp(s string) *string { return &s }

func (s *session) internalTopics() []internalTopic {
	compact := map[string]*string{"cleanup.policy": strp("compact")}
	return []internalTopic{
		// Offset syncs keep history (translation of old group offsets), so
		// they are deleted by age, not compacted.
		{OffsetSyncsTopic(s.cfg.Source.Name), map[string]*string{
			"cleanup.policy": strp("delete"), "retention.ms": strp(strconv.Itoa(7 * 24 * 3600 * 1000))}},
		{CheckpointsTopic(s.cfg.Source.Name), compact},
		{HeartbeatsTopic, compact},
		{LinkStateTopic(s.cfg.Source.Name), compact},
		{StatusTopic(s.cfg.Source.Name), compact},
		{ACLsTopic(s.cfg.Source.Name), compact},
	}
}

// ensureInternalTopics creates the bookkeeping topics (one partition each,
// so that their records keep one order) when missing.
func (s *session) ensureInternalTopics(ctx context.Context) error {
	for _, it := range s.internalTopics() {
		if err := s.createTopic(ctx, it.name, 1, it.configs); err != nil {
			return err
		}
	}
	return nil
}

// createTopic creates a target topic; one that exists already is fine.
func (s *session) createTopic(ctx context.Context, topic string, partitions int32, configs map[string]*string) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := s.dstAdm.CreateTopic(cctx, partitions, s.cfg.Topics.ReplicationFactor, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("mirror: create target topic %s: %w", topic, err)
	}
	return nil
}

// run starts the mode's replicator and drives discovery, checkpoints and
// heartbeats until ctx ends or something fails.
func (s *session) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.loadPromoted(ctx); err != nil {
		return err
	}
	if s.cfg.Topics.SyncDeletions {
		if err := s.loadCreated(ctx); err != nil {
			return err
		}
	}
	switch s.cfg.Mirror.Mode {
	case ModeCopy:
		c, err := newCopier(s)
		if err != nil {
			return err
		}
		s.copier = c
		if c.txn != nil {
			if err := s.fence(ctx); err != nil {
				return err
			}
		}
		if err := s.loadSyncs(ctx); err != nil {
			return err
		}
		go c.run(ctx)
	case ModeLink:
		l, err := newLinker(s, ctx)
		if err != nil {
			return err
		}
		s.linker = l
	}
	if err := s.refresh(ctx); err != nil {
		return err
	}
	refresh := time.NewTicker(time.Duration(s.cfg.Mirror.RefreshIntervalMs) * time.Millisecond)
	defer refresh.Stop()
	ckpt := time.NewTicker(time.Duration(s.cfg.Mirror.CheckpointIntervalMs) * time.Millisecond)
	defer ckpt.Stop()
	var beat <-chan time.Time
	if s.cfg.Mirror.HeartbeatIntervalMs > 0 {
		t := time.NewTicker(time.Duration(s.cfg.Mirror.HeartbeatIntervalMs) * time.Millisecond)
		defer t.Stop()
		beat = t.C
		s.heartbeat(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-s.errs:
			return err
		case <-refresh.C:
			if err := s.refresh(ctx); err != nil {
				return err
			}
		case <-ckpt.C:
			if err := s.loadPromoted(ctx); err != nil {
				return err
			}
			s.applyPromoted()
			if s.copier != nil {
				s.copier.syncIdle()
				if err := s.retryFailing(ctx); err != nil {
					return err
				}
			}
			s.writeStatus(ctx)
			if err := s.checkpoint(ctx); err != nil {
				s.m.log.Warn("checkpoint round failed", "err", err)
			}
		case <-beat:
			s.heartbeat(ctx)
		}
	}
}

// heartbeat writes one heartbeat record; a failure is logged, not fatal.
func (s *session) heartbeat(ctx context.Context) {
	hb := Heartbeat{Source: s.cfg.Source.Name, Target: s.cfg.Target.Name, Timestamp: s.m.opts.Now().UnixMilli()}
	r := &kgo.Record{Topic: HeartbeatsTopic, Partition: 0, Key: hb.Key(), Value: hb.Value()}
	s.dst.Produce(ctx, r, func(_ *kgo.Record, err error) {
		if err != nil {
			if ctx.Err() == nil {
				s.m.log.Warn("heartbeat failed", "err", err)
			}
			return
		}
		s.m.met.heartbeat.Inc()
	})
}

// readAll reads a target topic's partition 0 from the start to its end
// offset (read_committed), calling fn for each record. It reads at most
// limit records. The record before the end offset must be a committed one
// (see fence), or readAll waits for ctx.
func readAll(ctx context.Context, c Cluster, topic string, limit int, fn func(*kgo.Record) error) error {
	adm, err := newClient(c, "gregor-mirror-reader")
	if err != nil {
		return err
	}
	defer adm.Close()
	ends, err := kadm.NewClient(adm).ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("mirror: end offsets of %s: %w", topic, err)
	}
	end, ok := ends.Lookup(topic, 0)
	if !ok {
		return nil
	}
	if end.Err != nil {
		if errors.Is(end.Err, kerr.UnknownTopicOrPartition) {
			return nil
		}
		return fmt.Errorf("mirror: end offset of %s: %w", topic, end.Err)
	}
	if end.Offset <= 0 {
		return nil
	}
	cl, err := newClient(c, "gregor-mirror-reader",
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), // offset syncs of aborted copies are not positions
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	n := 0
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return fmt.Errorf("mirror: read %s: %w", topic, ferr)
		}
		var done bool
		var rerr error
		fs.EachRecord(func(r *kgo.Record) {
			if done || rerr != nil {
				return
			}
			n++
			if n > limit {
				rerr = fmt.Errorf("mirror: %s holds more than %d records", topic, limit)
				return
			}
			rerr = fn(r)
			if r.Offset+1 >= end.Offset {
				done = true
			}
		})
		if rerr != nil {
			return rerr
		}
		if done {
			return nil
		}
	}
}

// retryFailing starts again the failing partitions whose backoff has
// passed and whose records are no longer in flight, from what the target
// holds (the offset syncs are read again: this session wrote some).
func (s *session) retryFailing(ctx context.Context) error {
	now := s.m.opts.Now()
	due := map[string][]int32{}
	for tp := range s.started {
		st, ok := s.m.lookup(tp.topic, tp.partition)
		if !ok {
			continue
		}
		st.mu.Lock()
		if st.state == StateFailing && !st.retryAt.IsZero() && !now.Before(st.retryAt) && st.inflight == 0 {
			due[tp.topic] = append(due[tp.topic], tp.partition)
		}
		st.mu.Unlock()
	}
	if len(due) == 0 {
		return nil
	}
	if err := s.loadSyncs(ctx); err != nil {
		return err
	}
	for topic, parts := range due {
		s.m.log.Info("retrying failing partitions", "topic", topic, "partitions", parts)
		offsets, err := s.resumeCopy(ctx, topic, parts)
		if err != nil {
			return err
		}
		s.copier.add(topic, offsets)
	}
	return nil
}
