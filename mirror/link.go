package mirror

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/record"
)

// ErrLinkDiverged is wrapped when a link's target partition no longer
// matches its source: offsets would differ, so the partition stops.
var ErrLinkDiverged = errors.New("link target diverged from source")

// ErrLinkUnsupported is wrapped when the source holds something that an
// ordinary produce cannot place at the same offset on the target (control
// batches, offsets skipped by compaction, a log that starts above zero).
// Such partitions stop until the target offers an offset-preserving append.
var ErrLinkUnsupported = errors.New("link cannot preserve offsets")

// linker is link mode: one goroutine per partition fetches raw record batches
// from the source leader and produces them unchanged to the target leader,
// one batch per request, checking that the target assigns the batch the
// source's base offset. CRCs cover everything but the base offset and leader
// epoch, so the target holds the same batches (timestamps, producer ids and
// sequences included) at the same offsets.
type linker struct {
	s      *session
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// mu guards workers.
	mu      sync.Mutex
	workers map[topicPartition]context.CancelFunc
}

func newLinker(s *session, ctx context.Context) *linker {
	ctx, cancel := context.WithCancel(ctx)
	return &linker{s: s, ctx: ctx, cancel: cancel, workers: map[topicPartition]context.CancelFunc{}}
}

func (l *linker) start(topic string, p int32) {
	ctx, cancel := context.WithCancel(l.ctx)
	l.mu.Lock()
	l.workers[topicPartition{topic, p}] = cancel
	l.mu.Unlock()
	st := l.s.m.state(topic, p)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.work(ctx, st)
	}()
}

// remove stops one partition's worker.
func (l *linker) remove(topic string, p int32) {
	l.mu.Lock()
	cancel, ok := l.workers[topicPartition{topic, p}]
	delete(l.workers, topicPartition{topic, p})
	l.mu.Unlock()
	if ok {
		cancel()
	}
}

func (l *linker) stop() {
	l.cancel()
	l.wg.Wait()
}

// work runs one partition until ctx ends or the partition stops. Transient
// errors restart the loop, which re-reads the target's end offset, so a
// produce whose answer was lost is never repeated.
func (l *linker) work(ctx context.Context, st *partitionState) {
	// Each partition long-polls the source on its own connection: answers
	// on one connection come in request order, so a shared one would hold
	// a partition's new data behind other partitions' idle polls.
	fetcher, err := newClient(l.s.cfg.Source, "gregor-mirror-link-"+l.s.cfg.Target.Name)
	if err != nil {
		st.fail(err)
		return
	}
	defer fetcher.Close()
	for ctx.Err() == nil {
		err := l.copyPartition(ctx, st, fetcher)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrLinkDiverged) || errors.Is(err, ErrLinkUnsupported) || errors.Is(err, record.ErrCorrupt) {
			l.s.m.log.Error("link partition stopped", "topic", st.topic, "partition", st.partition, "err", err)
			st.fail(err)
			return
		}
		l.s.m.log.Warn("link partition retrying", "topic", st.topic, "partition", st.partition, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-l.s.m.opts.After(250 * time.Millisecond):
		}
	}
}

// endpoint is where a partition's leader is and its topic id.
type endpoint struct {
	leader  int32
	topicID [16]byte
}

func findLeader(ctx context.Context, cl *kgo.Client, topic string, p int32) (endpoint, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return endpoint{}, fmt.Errorf("mirror: metadata of %s: %w", topic, err)
	}
	for _, mt := range resp.Topics {
		if mt.Topic == nil || *mt.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
			return endpoint{}, fmt.Errorf("mirror: metadata of %s: %w", topic, err)
		}
		for _, mp := range mt.Partitions {
			if mp.Partition == p {
				if err := kerr.ErrorForCode(mp.ErrorCode); err != nil {
					return endpoint{}, fmt.Errorf("mirror: metadata of %s[%d]: %w", topic, p, err)
				}
				return endpoint{leader: mp.Leader, topicID: mt.TopicID}, nil
			}
		}
	}
	return endpoint{}, fmt.Errorf("mirror: metadata of %s[%d]: %w", topic, p, kerr.UnknownTopicOrPartition)
}

// fetchRaw fetches one partition's record batches from its leader.
func fetchRaw(ctx context.Context, cl *kgo.Client, ep endpoint, topic string, p int32, offset int64, maxBytes int32, wait time.Duration) (kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(wait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = maxBytes
	req.IsolationLevel = 0 // every batch, as stored
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, ep.topicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, offset, maxBytes
	rp.CurrentLeaderEpoch, rp.LogStartOffset = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.Broker(int(ep.leader)))
	if err != nil {
		return kmsg.FetchResponseTopicPartition{}, fmt.Errorf("mirror: fetch %s[%d] at %d: %w", topic, p, offset, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return kmsg.FetchResponseTopicPartition{}, fmt.Errorf("mirror: fetch %s[%d] at %d: %w", topic, p, offset, err)
	}
	for _, t := range resp.Topics {
		if t.Topic != topic && t.TopicID != ep.topicID {
			continue
		}
		for _, fp := range t.Partitions {
			if fp.Partition == p {
				return fp, nil
			}
		}
	}
	return kmsg.FetchResponseTopicPartition{}, fmt.Errorf("mirror: fetch %s[%d]: partition missing from the answer", topic, p)
}

// produceRaw writes record batches unchanged and returns the base offset the
// target assigned.
func produceRaw(ctx context.Context, cl *kgo.Client, ep endpoint, topic string, p int32, batches []byte) (int64, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, ep.topicID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = p, batches
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.Broker(int(ep.leader)))
	if err != nil {
		return 0, fmt.Errorf("mirror: produce to %s[%d]: %w", topic, p, err)
	}
	for _, t := range resp.Topics {
		for _, rp := range t.Partitions {
			if rp.Partition != p {
				continue
			}
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				msg := ""
				if rp.ErrorMessage != nil {
					msg = ": " + *rp.ErrorMessage
				}
				return 0, fmt.Errorf("mirror: produce to %s[%d]: %w%s", topic, p, err, msg)
			}
			return rp.BaseOffset, nil
		}
	}
	return 0, fmt.Errorf("mirror: produce to %s[%d]: partition missing from the answer", topic, p)
}

// firstBatch returns the header of the first complete batch in b.
func firstBatch(b []byte) (record.Header, bool) {
	it := record.Batches(b)
	if it.Next() {
		return it.Header(), true
	}
	return record.Header{}, false
}

// copyPartition places the partition at the target's end offset, checks
// that the target's last batch is the source's, and copies batches until an
// error.
func (l *linker) copyPartition(ctx context.Context, st *partitionState, fetcher *kgo.Client) error {
	s := l.s
	src, err := findLeader(ctx, fetcher, st.topic, st.partition)
	if err != nil {
		return err
	}
	dst, err := findLeader(ctx, s.dst, st.target, st.partition)
	if err != nil {
		return err
	}
	ends, err := s.dstAdm.ListEndOffsets(ctx, st.target)
	if err != nil {
		return fmt.Errorf("mirror: end offset of %s: %w", st.target, err)
	}
	pos, err := lookupOffset(ends, st.target, st.partition)
	if err != nil {
		return err
	}
	if pos > 0 {
		if err := l.checkTail(ctx, st, fetcher, src, dst, pos); err != nil {
			return err
		}
	}
	st.mu.Lock()
	st.offsets.reset(pos, pos)
	st.fetchNext = pos
	st.state, st.err = StateMirroring, nil
	st.mu.Unlock()
	maxBytes := s.cfg.Mirror.MaxFetchBytes
	for ctx.Err() == nil {
		fp, err := fetchRaw(ctx, fetcher, src, st.topic, st.partition, pos, maxBytes, 500*time.Millisecond)
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(fp.ErrorCode); err != nil {
			if errors.Is(err, kerr.OffsetOutOfRange) {
				return l.gap(ctx, st, pos)
			}
			return fmt.Errorf("mirror: fetch %s[%d] at %d: %w", st.topic, st.partition, pos, err)
		}
		st.mu.Lock()
		st.sourceEnd = fp.HighWatermark
		st.mu.Unlock()
		st.met.lag.Set(float64(max(0, fp.HighWatermark-pos)))
		it := record.Batches(fp.RecordBatches)
		for it.Next() {
			h, batch := it.Header(), it.Batch()
			if h.LastOffset() < pos {
				continue // a batch before pos, as Kafka may answer after compaction
			}
			if err := checkLinkBatch(st, h, batch, pos); err != nil {
				return err
			}
			base, err := produceRaw(ctx, s.dst, dst, st.target, st.partition, batch)
			if err != nil {
				return err
			}
			if base != h.BaseOffset {
				return fmt.Errorf("mirror: %w: %s[%d] batch at source offset %d was written at target offset %d",
					ErrLinkDiverged, st.target, st.partition, h.BaseOffset, base)
			}
			pos = h.NextOffset()
			now := s.m.opts.Now()
			st.mu.Lock()
			st.offsets.srcNext, st.offsets.tgtNext, st.fetchNext = pos, pos, pos
			st.records += int64(h.NumRecords)
			st.mu.Unlock()
			st.met.records.Add(float64(h.NumRecords))
			st.met.bytes.Add(float64(len(batch)))
			if h.MaxTimestamp >= 0 {
				age := now.Sub(time.UnixMilli(h.MaxTimestamp)).Seconds()
				st.met.age.Set(age)
				st.met.latency.Observe(age)
			}
			st.met.lag.Set(float64(max(0, fp.HighWatermark-pos)))
		}
		if err := it.Err(); err != nil && !errors.Is(err, record.ErrTruncated) {
			return fmt.Errorf("mirror: source %s[%d] at %d: %w", st.topic, st.partition, pos, err)
		}
	}
	return ctx.Err()
}

// checkLinkBatch refuses batches a produce cannot place at their own offset.
func checkLinkBatch(st *partitionState, h record.Header, batch []byte, pos int64) error {
	switch {
	case record.Checksum(batch) != h.CRC:
		return fmt.Errorf("mirror: source %s[%d] batch at %d: %w: crc mismatch", st.topic, st.partition, h.BaseOffset, record.ErrCorrupt)
	case h.BaseOffset != pos:
		return fmt.Errorf("mirror: %w: source %s[%d] has no records at offsets %d to %d (compaction or deletion)",
			ErrLinkUnsupported, st.topic, st.partition, pos, h.BaseOffset-1)
	case h.IsControl():
		return fmt.Errorf("mirror: %w: source %s[%d] holds a transaction marker at offset %d",
			ErrLinkUnsupported, st.topic, st.partition, h.BaseOffset)
	case h.IsTransactional():
		return fmt.Errorf("mirror: %w: source %s[%d] holds a transactional batch at offset %d",
			ErrLinkUnsupported, st.topic, st.partition, h.BaseOffset)
	case h.NumRecords <= 0:
		return fmt.Errorf("mirror: %w: source %s[%d] holds an empty batch at offset %d",
			ErrLinkUnsupported, st.topic, st.partition, h.BaseOffset)
	}
	return nil
}

// gap handles offset out of range: the source deleted records the link had
// not copied, or the source log is behind the target. A link cannot skip
// offsets, so the partition stops either way, and the gap is reported.
func (l *linker) gap(ctx context.Context, st *partitionState, pos int64) error {
	logStart, hw, err := l.sourceRange(ctx, st)
	if err != nil {
		return err
	}
	if logStart > pos {
		st.met.gap.Add(float64(logStart - pos))
		return fmt.Errorf("mirror: %w: source %s[%d] deleted offsets %d to %d before they were mirrored",
			ErrLinkUnsupported, st.topic, st.partition, pos, logStart-1)
	}
	if hw < pos {
		return fmt.Errorf("mirror: %w: source %s[%d] ends at %d, below the target's end %d",
			ErrLinkDiverged, st.topic, st.partition, hw, pos)
	}
	return fmt.Errorf("mirror: fetch %s[%d] at %d: %w (log %d to %d)", st.topic, st.partition, pos,
		kerr.OffsetOutOfRange, logStart, hw)
}

// sourceRange lists the source partition's log start and end offsets (a
// fetch answer's offsets are not reliable with an error).
func (l *linker) sourceRange(ctx context.Context, st *partitionState) (logStart, hw int64, err error) {
	starts, err := l.s.srcAdm.ListStartOffsets(ctx, st.topic)
	if err != nil {
		return 0, 0, fmt.Errorf("mirror: start offset of %s: %w", st.topic, err)
	}
	if logStart, err = lookupOffset(starts, st.topic, st.partition); err != nil {
		return 0, 0, err
	}
	ends, err := l.s.srcAdm.ListEndOffsets(ctx, st.topic)
	if err != nil {
		return 0, 0, fmt.Errorf("mirror: end offset of %s: %w", st.topic, err)
	}
	hw, err = lookupOffset(ends, st.topic, st.partition)
	return logStart, hw, err
}

// checkTail compares the target's last batch with the source batch at the
// same offset: a target written by anything but this link stops it.
func (l *linker) checkTail(ctx context.Context, st *partitionState, fetcher *kgo.Client, src, dst endpoint, pos int64) error {
	s := l.s
	tf, err := fetchRaw(ctx, s.dst, dst, st.target, st.partition, pos-1, 1<<20, 0)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(tf.ErrorCode); err != nil {
		return fmt.Errorf("mirror: fetch target %s[%d] at %d: %w", st.target, st.partition, pos-1, err)
	}
	th, ok := firstBatch(tf.RecordBatches)
	if !ok {
		return fmt.Errorf("mirror: target %s[%d]: no batch at offset %d", st.target, st.partition, pos-1)
	}
	sf, err := fetchRaw(ctx, fetcher, src, st.topic, st.partition, th.BaseOffset, 1<<20, 0)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(sf.ErrorCode); err != nil {
		if errors.Is(err, kerr.OffsetOutOfRange) {
			// The source deleted the batch; the tail cannot be compared.
			// Carry on if the source still holds what comes next.
			logStart, _, rerr := l.sourceRange(ctx, st)
			if rerr != nil {
				return rerr
			}
			if logStart <= pos {
				l.s.m.log.Warn("link tail not verified: the source deleted it", "topic", st.topic,
					"partition", st.partition, "offset", th.BaseOffset)
				return nil
			}
			return l.gap(ctx, st, pos)
		}
		return fmt.Errorf("mirror: fetch source %s[%d] at %d: %w", st.topic, st.partition, th.BaseOffset, err)
	}
	sh, ok := firstBatch(sf.RecordBatches)
	if !ok || sh.BaseOffset != th.BaseOffset || sh.CRC != th.CRC || sh.LastOffsetDelta != th.LastOffsetDelta {
		return fmt.Errorf("mirror: %w: target %s[%d] batch at %d is not the source's", ErrLinkDiverged,
			st.target, st.partition, th.BaseOffset)
	}
	return nil
}
