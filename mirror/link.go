package mirror

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/record"
)

// ErrLinkDiverged is wrapped when a link's target partition no longer
// matches its source: offsets would differ, so the partition stops.
var ErrLinkDiverged = errors.New("link target diverged from source")

// ErrLinkUnsupported is wrapped when a link partition cannot go on without
// losing records: the source deleted offsets it had not copied and
// on_source_gap is "stop".
var ErrLinkUnsupported = errors.New("link cannot preserve offsets")

// ErrLinkRefused is wrapped when the target refuses the link's appends:
// the topic was promoted (its gregor.mirror.link config deleted) or belongs
// to another link, or the link lacks ALTER on it.
var ErrLinkRefused = errors.New("target refused the link")

// LinkConfig is the target topic config naming the link that owns a mirror
// topic; the target refuses ordinary produce to such a topic.
const LinkConfig = "gregor.mirror.link"

// linkTxnPrefix starts the transactional id of a link's produce requests,
// which a Gregor target reads as "append at the batches' own offsets".
const linkTxnPrefix = "__gregor_link:"

// LinkName is the name under which a link-mode mirror owns its target
// topics: the source cluster's name.
func (c Config) LinkName() string { return c.Source.Name }

// linker is link mode: one goroutine per partition fetches raw record batches
// from the source leader and produces them unchanged to the target leader
// under the link's transactional id, which makes a Gregor target append each
// batch at its own base offset (gaps left by compaction or deletion kept,
// transaction markers and producer state copied). CRCs cover everything but
// the base offset and leader epoch, so the target holds the same batches
// (timestamps, producer ids and sequences included) at the same offsets.
//
// Memory and connections are bounded whatever the number of partitions:
// fetches take their size from the mirror-wide budget (buffer_memory), and
// partitions write through a fixed set of target clients
// (target_connections_per_broker), each with one produce connection per
// target broker.
type linker struct {
	s      *session
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	budget *byteBudget
	// writers are the target clients partitions write through; a broker
	// answers one connection's requests in order, so each partition's
	// acks=all write (its fsync) waits only for those of the partitions
	// sharing its writer.
	writers []*kgo.Client
	// mu guards workers and started.
	mu      sync.Mutex
	workers map[topicPartition]context.CancelFunc
	started int
}

func newLinker(s *session, ctx context.Context) (*linker, error) {
	ctx, cancel := context.WithCancel(ctx)
	l := &linker{s: s, ctx: ctx, cancel: cancel, workers: map[topicPartition]context.CancelFunc{},
		budget: newByteBudget(s.cfg.Mirror.BufferMemory, s.m.met.buffered)}
	for range s.cfg.Mirror.TargetConnectionsPerBroker {
		w, err := newClient(s.cfg.Target, "gregor-mirror-link-"+s.cfg.Source.Name)
		if err != nil {
			l.closeWriters()
			cancel()
			return nil, err
		}
		l.writers = append(l.writers, w)
	}
	return l, nil
}

func (l *linker) start(topic string, p int32) {
	ctx, cancel := context.WithCancel(l.ctx)
	l.mu.Lock()
	l.workers[topicPartition{topic, p}] = cancel
	// Round robin in start order spreads the partitions evenly.
	writer := l.writers[l.started%len(l.writers)]
	l.started++
	l.mu.Unlock()
	st := l.s.m.state(topic, p)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.work(ctx, st, writer)
	}()
}

// partitions is how many partitions are linked, which the budget is split
// between.
func (l *linker) partitions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.workers)
}

func (l *linker) closeWriters() {
	for _, w := range l.writers {
		w.Close()
	}
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
	l.closeWriters()
}

// work runs one partition until ctx ends or the partition stops. Transient
// errors restart the loop, which re-reads the target's end offset, so a
// produce whose answer was lost is never repeated.
func (l *linker) work(ctx context.Context, st *partitionState, writer *kgo.Client) {
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
		err := l.copyPartition(ctx, st, fetcher, writer)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrLinkDiverged) || errors.Is(err, ErrLinkUnsupported) || errors.Is(err, ErrLinkRefused) || errors.Is(err, record.ErrCorrupt) {
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

// produceRaw writes record batches unchanged under the link's transactional
// id and returns the base offset the target answered.
func produceRaw(ctx context.Context, cl *kgo.Client, ep endpoint, link, topic string, p int32, batches []byte) (int64, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 30000
	req.TransactionID = kmsg.StringPtr(linkTxnPrefix + link)
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
				if errors.Is(err, kerr.PolicyViolation) || errors.Is(err, kerr.TopicAuthorizationFailed) {
					return 0, fmt.Errorf("mirror: produce to %s[%d]: %w: %w%s", topic, p, ErrLinkRefused, err, msg)
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
func (l *linker) copyPartition(ctx context.Context, st *partitionState, fetcher, writer *kgo.Client) error {
	s := l.s
	src, err := findLeader(ctx, fetcher, st.topic, st.partition)
	if err != nil {
		return err
	}
	dst, err := findLeader(ctx, writer, st.target, st.partition)
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
	starts, err := s.dstAdm.ListStartOffsets(ctx, st.target)
	if err != nil {
		return fmt.Errorf("mirror: start offset of %s: %w", st.target, err)
	}
	dstStart, err := lookupOffset(starts, st.target, st.partition)
	if err != nil {
		return err
	}
	// An empty target starts where the source's log starts: offsets the
	// source deleted before the link began were never the link's to copy.
	empty := dstStart == pos
	if !empty {
		if err := l.checkTail(ctx, st, fetcher, src, dst, pos); err != nil {
			return err
		}
	}
	st.mu.Lock()
	st.offsets.reset(pos, pos)
	st.fetchNext = pos
	st.state, st.err = StateMirroring, nil
	st.mu.Unlock()
	link := s.cfg.LinkName()
	// copied is the target's end. pos, where the source is fetched, runs
	// ahead of it after a source gap: a log start inside a batch still
	// serves the whole batch, which the target then takes from its base.
	copied := pos
	// trimTo is the source's log start when an empty target began there:
	// the target's log start is raised to it after the first append.
	trimTo := int64(-1)
	// next is the fetch at pos started while the previous batches were
	// written (nil when none is): records that arrive during a write are
	// on their way before its answer. The fetch only reads, and its
	// answer is used only once the write succeeded at the offsets it
	// follows.
	var next chan fetched
	// held is the budget taken by the batches being handled, given back
	// once they are written (at the next fetch) or when the loop ends.
	var held int64
	pctx, pcancel := context.WithCancel(ctx)
	defer func() {
		pcancel()
		l.budget.release(held)
		if next != nil {
			l.budget.release((<-next).held)
		}
	}()
	for ctx.Err() == nil {
		l.budget.release(held)
		held = 0
		var fp kmsg.FetchResponseTopicPartition
		if next != nil {
			f := <-next
			next = nil
			fp, held, err = f.fp, f.held, f.err
		} else {
			fp, held, err = l.fetch(ctx, fetcher, src, st, pos, -1)
		}
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(fp.ErrorCode); err != nil {
			if !errors.Is(err, kerr.OffsetOutOfRange) {
				return fmt.Errorf("mirror: fetch %s[%d] at %d: %w", st.topic, st.partition, pos, err)
			}
			next, err := l.gap(ctx, st, pos, empty)
			if err != nil {
				return err
			}
			if empty {
				trimTo = next
			}
			pos = next
			continue
		}
		st.mu.Lock()
		st.sourceEnd = fp.HighWatermark
		st.mu.Unlock()
		st.met.lag.Set(float64(max(0, fp.HighWatermark-pos)))
		// Every whole batch at or past pos goes in one request.
		var first, last record.Header
		from, to, n := -1, 0, 0
		it := record.Batches(fp.RecordBatches)
		for it.Next() {
			h, batch := it.Header(), it.Batch()
			if h.LastOffset() < copied {
				continue // a batch the target holds, as Kafka may answer after compaction
			}
			if err := checkLinkBatch(st, h, batch, copied); err != nil {
				return err
			}
			if from < 0 {
				from, first = it.Position(), h
			}
			to, last = it.Position()+len(batch), h
			n += int(h.NumRecords)
			pos, copied = h.NextOffset(), h.NextOffset()
		}
		if err := it.Err(); err != nil && !errors.Is(err, record.ErrTruncated) {
			return fmt.Errorf("mirror: source %s[%d] at %d: %w", st.topic, st.partition, pos, err)
		}
		if from < 0 {
			continue
		}
		batches := fp.RecordBatches[from:to]
		// Read ahead only with room in the budget: a partition never
		// waits for the budget while it holds some of it.
		if share := l.share(); l.budget.tryAcquire(int64(share)) {
			next = make(chan fetched, 1)
			go func(at int64) {
				fp, held, err := l.fetch(pctx, fetcher, src, st, at, share)
				next <- fetched{fp, held, err}
			}(pos)
		}
		base, err := produceRaw(ctx, writer, dst, link, st.target, st.partition, batches)
		if err != nil {
			return err
		}
		if base != first.BaseOffset {
			return fmt.Errorf("mirror: %w: %s[%d] batch at source offset %d was written at target offset %d",
				ErrLinkDiverged, st.target, st.partition, first.BaseOffset, base)
		}
		empty = false
		if trimTo > first.BaseOffset {
			if err := l.trimTarget(ctx, st, trimTo); err != nil {
				return err
			}
		}
		trimTo = -1
		now := s.m.opts.Now()
		st.mu.Lock()
		st.offsets.srcNext, st.offsets.tgtNext, st.fetchNext = pos, pos, pos
		st.records += int64(n)
		st.mu.Unlock()
		st.met.records.Add(float64(n))
		st.met.bytes.Add(float64(len(batches)))
		if last.MaxTimestamp >= 0 {
			age := now.Sub(time.UnixMilli(last.MaxTimestamp)).Seconds()
			st.met.age.Set(age)
			st.met.latency.Observe(age)
		}
		st.met.lag.Set(float64(max(0, fp.HighWatermark-pos)))
	}
	return ctx.Err()
}

// fetched is the answer of a fetch that ran while batches were written.
type fetched struct {
	fp   kmsg.FetchResponseTopicPartition
	held int64
	err  error
}

// share is one partition's fetch size under the budget.
func (l *linker) share() int32 {
	return l.budget.share(l.partitions(), l.s.cfg.Mirror.MaxFetchBytes)
}

// fetch fetches at offset with a share of the budget, taken here (waiting
// for it) when taken is negative, else already taken (taken bytes). It
// returns the budget the answer holds: its batches' size, the rest of the
// share given back, or what they exceed it by taken as well.
func (l *linker) fetch(ctx context.Context, fetcher *kgo.Client, src endpoint, st *partitionState, offset int64, taken int32) (kmsg.FetchResponseTopicPartition, int64, error) {
	if taken < 0 {
		taken = l.share()
		if err := l.budget.acquire(ctx, int64(taken)); err != nil {
			return kmsg.FetchResponseTopicPartition{}, 0, err
		}
	}
	fp, err := fetchRaw(ctx, fetcher, src, st.topic, st.partition, offset, taken, 500*time.Millisecond)
	if err != nil {
		l.budget.release(int64(taken))
		return fp, 0, err
	}
	size := int64(len(fp.RecordBatches))
	if size > int64(taken) {
		l.budget.force(size - int64(taken))
	} else {
		l.budget.release(int64(taken) - size)
	}
	return fp, size, nil
}

// checkLinkBatch refuses a corrupt source batch or one that would overlap
// what is already copied. Offsets skipped between batches (compaction) and
// control, transactional and empty batches are copied as they are.
func checkLinkBatch(st *partitionState, h record.Header, batch []byte, pos int64) error {
	switch {
	case record.Checksum(batch) != h.CRC:
		return fmt.Errorf("mirror: source %s[%d] batch at %d: %w: crc mismatch", st.topic, st.partition, h.BaseOffset, record.ErrCorrupt)
	case h.BaseOffset < pos:
		return fmt.Errorf("mirror: %w: source %s[%d] batch at %d overlaps offset %d, already copied",
			ErrLinkDiverged, st.topic, st.partition, h.BaseOffset, pos)
	case h.NumRecords < 0 || h.LastOffsetDelta < 0:
		return fmt.Errorf("mirror: source %s[%d] batch at %d: %w: %d records, last offset delta %d",
			st.topic, st.partition, h.BaseOffset, record.ErrCorrupt, h.NumRecords, h.LastOffsetDelta)
	}
	return nil
}

// gap handles offset out of range at pos and returns where to go on. An
// empty target starts at the source's log start. Otherwise the source
// deleted records the link had not copied, which is reported and, with
// on_source_gap = "skip", left as a gap in the target's offsets (the
// offsets that follow stay the source's); or the source log is behind the
// target, which stops the partition.
func (l *linker) gap(ctx context.Context, st *partitionState, pos int64, empty bool) (int64, error) {
	logStart, hw, err := l.sourceRange(ctx, st)
	if err != nil {
		return 0, err
	}
	if logStart > pos && empty {
		l.s.m.log.Info("link starts at the source's log start", "topic", st.topic, "partition", st.partition, "offset", logStart)
		st.mu.Lock()
		st.fetchNext = logStart
		st.mu.Unlock()
		return logStart, nil
	}
	if logStart > pos {
		lost := logStart - pos
		st.met.gap.Add(float64(lost))
		gerr := fmt.Errorf("mirror: source %s[%d] deleted offsets %d to %d (%d offsets) before they were mirrored",
			st.topic, st.partition, pos, logStart-1, lost)
		if l.s.cfg.Mirror.OnSourceGap == GapStop {
			return 0, fmt.Errorf("%w: %w", ErrLinkUnsupported, gerr)
		}
		l.s.m.log.Error("skipping deleted offsets (on_source_gap = skip)", "topic", st.topic, "partition", st.partition, "err", gerr)
		st.mu.Lock()
		st.fetchNext, st.err = logStart, gerr
		st.mu.Unlock()
		return logStart, nil
	}
	if hw < pos {
		return 0, fmt.Errorf("mirror: %w: source %s[%d] ends at %d, below the target's end %d",
			ErrLinkDiverged, st.topic, st.partition, hw, pos)
	}
	return 0, fmt.Errorf("mirror: fetch %s[%d] at %d: %w (log %d to %d)", st.topic, st.partition, pos,
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
			// The copy loop finds whether records after it were lost.
			l.s.m.log.Warn("link tail not verified: the source deleted it", "topic", st.topic,
				"partition", st.partition, "offset", th.BaseOffset)
			return nil
		}
		return fmt.Errorf("mirror: fetch source %s[%d] at %d: %w", st.topic, st.partition, th.BaseOffset, err)
	}
	sh, ok := firstBatch(sf.RecordBatches)
	if ok && compactedSince(th, sh) {
		l.s.m.log.Warn("link tail not verified: the source compacted it since", "topic", st.topic,
			"partition", st.partition, "offset", th.BaseOffset)
		return nil
	}
	if !ok || sh.BaseOffset != th.BaseOffset || sh.CRC != th.CRC || sh.LastOffsetDelta != th.LastOffsetDelta {
		return fmt.Errorf("mirror: %w: target %s[%d] batch at %d is not the source's", ErrLinkDiverged,
			st.target, st.partition, th.BaseOffset)
	}
	return nil
}

// compactedSince reports whether the source batch src, fetched at the
// target batch dst's base offset, is what compaction leaves of dst: the
// same offset range with fewer records (a v2 batch keeps its base and last
// offsets when compacted), or nothing left of dst's range at all.
func compactedSince(dst, src record.Header) bool {
	if src.BaseOffset > dst.LastOffset() {
		return true
	}
	return src.BaseOffset == dst.BaseOffset && src.LastOffsetDelta == dst.LastOffsetDelta &&
		src.NumRecords < dst.NumRecords && src.CRC != dst.CRC
}

// newTopicConfigs returns the configs of a new target topic: the synced
// ones and, in link mode, the link's claim, so that from its creation only
// the link writes the topic.
func (s *session) newTopicConfigs(synced map[string]*string) map[string]*string {
	if s.cfg.Mirror.Mode != ModeLink {
		return synced
	}
	out := make(map[string]*string, len(synced)+1)
	maps.Copy(out, synced)
	out[LinkConfig] = kmsg.StringPtr(s.cfg.LinkName())
	return out
}

// claimLink sets gregor.mirror.link on an existing target topic that names
// no link. A topic that names another link is left alone: the target then
// refuses this link's appends and its partitions stop, reporting why.
func (s *session) claimLink(ctx context.Context, target string) error {
	rcs, err := s.dstAdm.DescribeTopicConfigs(ctx, target)
	if err == nil {
		var rc kadm.ResourceConfig
		if rc, err = rcs.On(target, nil); err == nil {
			err = rc.Err
		}
		for _, c := range rc.Configs {
			if c.Key == LinkConfig && c.Value != nil && *c.Value != "" {
				return nil
			}
		}
	}
	if err != nil {
		return fmt.Errorf("mirror: describe target %s: %w", target, err)
	}
	alter := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: LinkConfig, Value: kmsg.StringPtr(s.cfg.LinkName())}}
	resps, err := s.dstAdm.AlterTopicConfigs(ctx, alter, target)
	if err == nil {
		var r kadm.AlterConfigsResponse
		if r, err = resps.On(target, nil); err == nil && r.Err != nil {
			err = fmt.Errorf("%w (%s)", r.Err, r.ErrMessage)
		}
	}
	if err != nil {
		return fmt.Errorf("mirror: make target %s a mirror of link %s: %w", target, s.cfg.LinkName(), err)
	}
	s.m.log.Info("target topic claimed by the link", "topic", target, "link", s.cfg.LinkName())
	return nil
}

// trimTarget raises the target partition's log start offset to the
// source's (DeleteRecords), for a link that started inside a batch.
func (l *linker) trimTarget(ctx context.Context, st *partitionState, offset int64) error {
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: st.target, Partition: st.partition, At: offset, LeaderEpoch: -1})
	resp, err := l.s.dstAdm.DeleteRecords(ctx, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("mirror: start target %s[%d] at the source's log start %d: %w", st.target, st.partition, offset, err)
	}
	return nil
}
