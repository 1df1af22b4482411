package mirror

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// syncEvery bounds how long an active partition goes without a position
// sync, which bounds the records re-read when a session resumes.
const syncEvery = time.Second

// copier is copy mode: one source consumer over every mirrored partition
// (read_committed: aborted records and markers are not copied) feeding the
// session's idempotent target producer, partition to partition, in order;
// with exactly_once, a transactional producer of its own (copy_eos.go).
type copier struct {
	s  *session
	cl *kgo.Client
	// prods write the copied records (without exactly_once), target
	// partition p through prods[p % len(prods)], each on its own
	// connection and with its send policy (pace.go): a broker answers one connection's requests in order,
	// each acks=all produce after its partitions' fsyncs, so one
	// connection would make every partition's write wait for the others'.
	// They are not the session's dst: acknowledgements write offset syncs
	// from the producers' callbacks, and a producer whose buffer is full
	// blocks a Produce from its own callback forever.
	prods []*targetWriter
	// txn is the transactional target producer of an exactly-once copy
	// (nil otherwise); only the run goroutine uses it.
	txn *kgo.Client
}

func newCopier(s *session) (*copier, error) {
	cl, err := newClient(s.cfg.Source, "gregor-mirror-"+s.cfg.Target.Name,
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxWait(250*time.Millisecond),
		kgo.FetchMaxPartitionBytes(s.cfg.Mirror.MaxFetchBytes),
	)
	if err != nil {
		return nil, err
	}
	c := &copier{s: s, cl: cl}
	if s.cfg.Mirror.ExactlyOnce {
		if c.txn, err = newTxnProducer(s.cfg, s.limits); err != nil {
			cl.Close()
			return nil, err
		}
		return c, nil
	}
	// One producer per target connection allowed: each has one produce
	// connection per target broker.
	writers := s.cfg.Mirror.TargetConnectionsPerBroker
	for range writers {
		prod, err := newClient(s.cfg.Target, "gregor-mirror-"+s.cfg.Source.Name,
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			// The linger bounds how long records gather behind an
			// outstanding write; a writer with none sends at once
			// (pace.go).
			kgo.ProducerLinger(time.Duration(s.cfg.Mirror.LingerMs)*time.Millisecond),
			kgo.ProducerBatchMaxBytesFn(s.limits.batchMax),
			kgo.MaxBufferedRecords(max(50000/writers, 1000)),
		)
		if err != nil {
			c.close(context.Background())
			return nil, err
		}
		c.prods = append(c.prods, newTargetWriter(prod))
	}
	return c, nil
}

// writer is the producer of a target partition: always the same one, so
// that a partition's records keep their order.
func (c *copier) writer(p int32) *targetWriter { return c.prods[int(p)%len(c.prods)] }

// close stops consuming and, briefly, waits for the records in flight so
// that their offset syncs can follow.
func (c *copier) close(ctx context.Context) {
	c.cl.Close()
	if c.txn != nil {
		c.txn.Close()
	}
	for _, w := range c.prods {
		_ = w.cl.Flush(ctx)
	}
	for _, w := range c.prods {
		w.close()
	}
}

// add starts consuming partitions of a source topic at the given offsets.
func (c *copier) add(topic string, offsets map[int32]int64) {
	ps := make(map[int32]kgo.Offset, len(offsets))
	for p, o := range offsets {
		ps[p] = kgo.NewOffset().At(o)
	}
	c.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: ps})
}

// remove stops consuming partitions.
func (c *copier) remove(topic string, parts ...int32) {
	c.cl.RemoveConsumePartitions(map[string][]int32{topic: parts})
}

// run polls the source and produces every record until ctx ends.
func (c *copier) run(ctx context.Context) {
	for {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fs.EachError(func(topic string, p int32, err error) {
			c.fetchError(ctx, topic, p, err)
		})
		if c.txn != nil {
			if err := c.transact(ctx, fs); err != nil {
				if ctx.Err() == nil {
					c.s.report(err)
				}
				return
			}
			continue
		}
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			st, ok := c.s.m.lookup(fp.Topic, fp.Partition)
			if !ok {
				return
			}
			st.mu.Lock()
			if fp.HighWatermark >= 0 {
				st.sourceEnd = fp.HighWatermark
			}
			running := st.state == StateMirroring
			st.mu.Unlock()
			if !running {
				return
			}
			for _, r := range fp.Records {
				if !c.produce(ctx, st, r) {
					return
				}
			}
		})
		for _, w := range c.prods {
			w.polled()
		}
	}
}

// produce writes one source record to the same partition of the target
// topic; the acknowledgement advances the partition's offset map. It
// returns false when the partition stopped (its later records must not be
// written).
func (c *copier) produce(ctx context.Context, st *partitionState, src *kgo.Record) bool {
	if !c.admit(st, src) {
		return st.running()
	}
	if n := st.spreadTo(); n > 0 {
		c.produceSpread(ctx, st, src, n)
		return true
	}
	up := src.Offset
	ts := src.Timestamp
	size := recordSize(src)
	out := &kgo.Record{Topic: st.target, Partition: src.Partition, Key: src.Key, Value: src.Value,
		Headers: src.Headers, Timestamp: ts}
	st.mu.Lock()
	st.fetchNext = up + 1
	st.inflight++
	st.mu.Unlock()
	c.writer(out.Partition).produce(ctx, out, func(r *kgo.Record, err error) {
		if err != nil {
			st.mu.Lock()
			st.inflight--
			st.mu.Unlock()
			if ctx.Err() == nil {
				c.writeFailed(st, up, err)
			}
			return
		}
		now := c.s.m.opts.Now()
		st.mu.Lock()
		st.inflight--
		newRun := st.offsets.add(up, r.Offset)
		st.passSkips()
		st.records++
		st.wrote(now)
		needSync := newRun || now.Sub(st.lastSync) >= syncEvery
		if needSync {
			st.lastSync, st.syncedUp = now, up
		}
		st.mu.Unlock()
		st.met.records.Inc()
		st.met.bytes.Add(float64(size))
		age := now.Sub(ts).Seconds()
		st.met.age.Set(age)
		st.met.latency.Observe(age)
		if needSync {
			c.writeSync(ctx, OffsetSync{Topic: st.topic, Partition: st.partition, Upstream: up, Downstream: r.Offset})
		}
	})
	return true
}

// running reports whether the partition is mirroring.
func (st *partitionState) running() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.state == StateMirroring
}

// admit checks that a source record fits the target topic's limit. One
// that does not is counted and, by on_record_too_large, skipped (the
// position moves past it once the records before it are acknowledged) or
// stops the partition at it. Either way it is never written.
func (c *copier) admit(st *partitionState, src *kgo.Record) bool {
	terr := c.s.tooLarge(st, src)
	if terr == nil {
		return true
	}
	st.met.tooLarge.Inc()
	if c.s.cfg.Mirror.OnRecordTooLarge == TooLargeSkip {
		c.s.m.log.Warn("skipping a record larger than the target accepts (on_record_too_large = skip)",
			"topic", st.topic, "partition", st.partition, "offset", src.Offset, "err", terr)
		st.mu.Lock()
		st.tooLarge++
		st.err = terr
		st.fetchNext = src.Offset + 1
		if st.spread > 0 {
			// Placed by key: the acknowledgement order tracks the position.
			st.acks.sent(src.Offset)
			if done, moved := st.acks.acked(src.Offset); moved {
				st.offsets.skipTo(done + 1)
			}
		} else {
			st.skips = append(st.skips, src.Offset)
			st.passSkips()
		}
		st.mu.Unlock()
		return false
	}
	c.s.m.log.Error("partition failing (on_record_too_large = stop)", "topic", st.topic, "partition", st.partition, "err", terr)
	c.remove(st.topic, st.partition)
	st.fail(terr)
	return false
}

// writeFailed handles a record the target refused. A persistent error
// (one a retry of the same write meets again: too large, authorization,
// a missing topic) moves the partition to the failing state, to be
// resumed after a backoff while the other partitions go on; anything
// else is transient and restarts the session, which resumes every
// partition from the target.
func (c *copier) writeFailed(st *partitionState, up int64, err error) {
	err = fmt.Errorf("mirror: write %s[%d] (source offset %d) to %s: %w", st.topic, st.partition, up, st.target, err)
	if !persistent(err) {
		c.s.report(err)
		return
	}
	st.mu.Lock()
	already := st.state == StateFailing
	st.mu.Unlock()
	if already {
		return
	}
	c.remove(st.topic, st.partition)
	st.failAt(err, c.s.m.opts.Now(), c.s.m.opts.RetryBackoff)
	c.s.m.log.Error("partition failing; retrying after a backoff", "topic", st.topic, "partition", st.partition, "err", err)
}

// writeSync appends an offset sync; losing one only makes a resume re-read
// more, so failures are logged.
func (c *copier) writeSync(ctx context.Context, sync OffsetSync) {
	rec := &kgo.Record{Topic: OffsetSyncsTopic(c.s.cfg.Source.Name), Partition: 0, Key: sync.Key(), Value: sync.Value()}
	c.s.dst.Produce(ctx, rec, func(_ *kgo.Record, err error) {
		if err != nil && ctx.Err() == nil {
			c.s.m.log.Warn("offset sync not written", "topic", sync.Topic, "partition", sync.Partition, "err", err)
		}
	})
}

// syncIdle writes a position sync for partitions whose last mirrored record
// has none yet (they went idle within syncEvery of the last one).
func (c *copier) syncIdle() {
	if c.txn != nil {
		return // every transaction ends with its partitions' positions
	}
	ctx := context.Background()
	c.s.m.mu.Lock()
	parts := make([]*partitionState, 0, len(c.s.m.parts))
	for _, st := range c.s.m.parts {
		parts = append(parts, st)
	}
	c.s.m.mu.Unlock()
	for _, st := range parts {
		st.mu.Lock()
		n := len(st.offsets.runs)
		var sync OffsetSync
		need := false
		if st.spread > 0 && st.state == StateMirroring {
			up := st.offsets.srcNext - 1
			if up != st.syncedUp && up >= 0 {
				need = true
				sync = OffsetSync{Topic: st.topic, Partition: st.partition, Upstream: up, Downstream: -1}
				st.syncedUp, st.lastSync = up, c.s.m.opts.Now()
			}
		} else if n > 0 && st.state == StateMirroring {
			last := st.offsets.runs[n-1]
			up := last.up + (st.offsets.tgtNext - last.down) - 1
			if up != st.syncedUp && up >= 0 {
				need = true
				sync = OffsetSync{Topic: st.topic, Partition: st.partition, Upstream: up, Downstream: st.offsets.tgtNext - 1}
				st.syncedUp, st.lastSync = up, c.s.m.opts.Now()
			}
		}
		st.mu.Unlock()
		if need {
			c.writeSync(ctx, sync)
		}
	}
}

// fetchError handles a partition's fetch error. Offset out of range means
// the source deleted records the mirror had not copied (or lost its log);
// it is reported and, by on_source_gap, stops the partition or skips to the
// log start counting what was lost. Other errors are retried by the client.
func (c *copier) fetchError(ctx context.Context, topic string, p int32, err error) {
	st, ok := c.s.m.lookup(topic, p)
	if !ok || !errors.Is(err, kerr.OffsetOutOfRange) {
		if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			c.s.m.log.Warn("source fetch error", "topic", topic, "partition", p, "err", err)
		}
		return
	}
	st.mu.Lock()
	pos := st.fetchNext
	if pos == 0 {
		pos = st.offsets.srcNext
	}
	st.mu.Unlock()
	starts, lerr := c.s.srcAdm.ListStartOffsets(ctx, topic)
	var start int64 = -1
	if lerr == nil {
		if o, ok := starts.Lookup(topic, p); ok && o.Err == nil {
			start = o.Offset
		}
	}
	c.remove(topic, p)
	if start < 0 || start <= pos {
		gerr := fmt.Errorf("mirror: source %s[%d] answered offset %d out of range but its log start is %d: the source log is behind the mirror",
			topic, p, pos, start)
		c.s.m.log.Error("partition stopped", "topic", topic, "partition", p, "err", gerr)
		st.fail(gerr)
		return
	}
	lost := start - pos
	st.met.gap.Add(float64(lost))
	gerr := fmt.Errorf("mirror: source %s[%d] deleted offsets %d to %d (%d offsets) before they were mirrored",
		topic, p, pos, start-1, lost)
	if c.s.cfg.Mirror.OnSourceGap == GapStop {
		c.s.m.log.Error("partition stopped (on_source_gap = stop)", "topic", topic, "partition", p, "err", gerr)
		st.fail(gerr)
		return
	}
	c.s.m.log.Error("skipping deleted offsets (on_source_gap = skip)", "topic", topic, "partition", p, "err", gerr)
	st.mu.Lock()
	st.fetchNext = start
	st.err = gerr
	st.mu.Unlock()
	c.add(topic, map[int32]int64{p: start})
}
