package mirror

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// maxSyncRecords bounds what a session reads of the offset syncs topic.
const maxSyncRecords = 5_000_000

// loadSyncs reads the offset syncs topic into s.syncs, in write order.
func (s *session) loadSyncs(ctx context.Context) error {
	s.syncs = map[topicPartition][]OffsetSync{}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return readAll(rctx, s.cfg.Target, OffsetSyncsTopic(s.cfg.Source.Name), maxSyncRecords, func(r *kgo.Record) error {
		sync, err := DecodeOffsetSync(r.Key, r.Value)
		if err != nil {
			s.m.log.Warn("ignoring offset sync", "offset", r.Offset, "err", err)
			return nil
		}
		if sync.Partition < 0 {
			return nil // a provenance mark, not a position
		}
		k := topicPartition{sync.Topic, sync.Partition}
		s.syncs[k] = append(s.syncs[k], sync)
		return nil
	})
}

// resumeCopy places every given partition of a source topic in its offset
// map and returns the source offsets to consume from. A partition with offset
// syncs resumes after the last one, first pairing the records that reached
// the target after that sync with their source records (so none is written
// twice, and each is checked to be the same); a new partition starts at the
// source's log start with a sync that marks where on the target it begins.
func (s *session) resumeCopy(ctx context.Context, topic string, parts []int32) (map[int32]int64, error) {
	target := s.m.pol.TargetTopic(topic)
	tgtEnds, err := s.dstAdm.ListEndOffsets(ctx, target)
	if err != nil {
		return nil, fmt.Errorf("mirror: end offsets of target %s: %w", target, err)
	}
	srcStarts, err := s.srcAdm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("mirror: start offsets of source %s: %w", topic, err)
	}
	out := make(map[int32]int64, len(parts))
	var fresh []*kgo.Record
	for _, p := range parts {
		st := s.m.state(topic, p)
		if st.spreadTo() > 0 {
			srcStart, err := lookupOffset(srcStarts, topic, p)
			if err != nil {
				st.fail(err)
				continue
			}
			from, sync := resumeSpread(st, s.syncs[topicPartition{topic, p}], srcStart)
			if sync != nil {
				fresh = append(fresh, &kgo.Record{Topic: OffsetSyncsTopic(s.cfg.Source.Name), Partition: 0,
					Key: sync.Key(), Value: sync.Value()})
			}
			out[p] = from
			continue
		}
		tgtEnd, err := lookupOffset(tgtEnds, target, p)
		if err != nil {
			st.fail(err)
			continue
		}
		// A stretch copied through the partitioner cannot be translated;
		// translation starts again after it.
		syncs, position := afterPositionSync(s.syncs[topicPartition{topic, p}])
		st.mu.Lock()
		st.offsets.reset(0, 0)
		st.skips = nil
		st.state, st.err = StateResuming, nil
		st.mu.Unlock()
		if len(syncs) == 0 {
			srcStart, err := lookupOffset(srcStarts, topic, p)
			if err != nil {
				st.fail(err)
				continue
			}
			if position != nil {
				srcStart = position.Upstream + 1
			}
			sentinel := OffsetSync{Topic: topic, Partition: p, Upstream: srcStart - 1, Downstream: tgtEnd - 1}
			fresh = append(fresh, &kgo.Record{Topic: OffsetSyncsTopic(s.cfg.Source.Name), Partition: 0,
				Key: sentinel.Key(), Value: sentinel.Value()})
			st.mu.Lock()
			st.offsets.add(sentinel.Upstream, sentinel.Downstream)
			st.syncedUp = sentinel.Upstream
			st.mu.Unlock()
			out[p] = srcStart
			continue
		}
		st.mu.Lock()
		for _, sy := range syncs {
			st.offsets.loadSync(sy.Upstream, sy.Downstream)
		}
		last := syncs[len(syncs)-1]
		st.syncedUp = last.Upstream
		st.mu.Unlock()
		switch {
		case tgtEnd < last.Downstream+1:
			st.fail(fmt.Errorf("mirror: target %s[%d] ends at %d but the mirror wrote offset %d: the target lost records",
				target, p, tgtEnd, last.Downstream))
			continue
		case tgtEnd > last.Downstream+1 && s.cfg.Mirror.ExactlyOnce:
			// Transactions commit records with their syncs: what follows
			// the last sync is a marker or aborted, never a committed copy.
		case tgtEnd > last.Downstream+1:
			n, runs, err := s.reconcile(ctx, st, last, tgtEnd)
			if err != nil {
				st.fail(err)
				continue
			}
			st.met.already.Add(float64(n))
			for _, sy := range runs {
				fresh = append(fresh, &kgo.Record{Topic: OffsetSyncsTopic(s.cfg.Source.Name), Partition: 0,
					Key: sy.Key(), Value: sy.Value()})
			}
		}
		st.mu.Lock()
		out[p] = st.offsets.srcNext
		st.mu.Unlock()
	}
	if len(fresh) > 0 {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := s.dst.ProduceSync(pctx, fresh...).FirstErr()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("mirror: write starting offset syncs for %s: %w", topic, err)
		}
	}
	for p, off := range out {
		st := s.m.state(topic, p)
		st.mu.Lock()
		st.fetchNext = off
		st.state = StateMirroring
		st.retryAt = time.Time{}
		st.met.failing.Set(0)
		st.mu.Unlock()
	}
	return out, nil
}

func lookupOffset(l kadm.ListedOffsets, topic string, p int32) (int64, error) {
	o, ok := l.Lookup(topic, p)
	if !ok {
		return 0, fmt.Errorf("mirror: no offset listed for %s[%d]", topic, p)
	}
	if o.Err != nil {
		return 0, fmt.Errorf("mirror: offset of %s[%d]: %w", topic, p, o.Err)
	}
	return o.Offset, nil
}

// recordDigest identifies a record's content for the resume check.
func recordDigest(r *kgo.Record) uint64 {
	h := fnv.New64a()
	h.Write(r.Key)
	h.Write([]byte{0})
	h.Write(r.Value)
	for _, hd := range r.Headers {
		h.Write([]byte(hd.Key))
		h.Write(hd.Value)
	}
	return h.Sum64()
}

type digested struct {
	offset int64
	digest uint64
	ts     int64
}

// reconcile pairs the target records after the last sync with the source
// records after it, adds each pair to the offset map and returns how many
// there were, with the offset syncs of runs that started among them. A pair
// whose content differs means something else wrote to the target; the
// partition then stops rather than guess. A source that deleted records
// after the last sync (a mirror killed before it synced, then retention) is
// a source gap: reported and, by on_source_gap, a stop or a resume at the
// source's log start (reconcileGap).
func (s *session) reconcile(ctx context.Context, st *partitionState, last OffsetSync, tgtEnd int64) (int, []OffsetSync, error) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var onTarget []digested
	err := readRange(rctx, s.cfg.Target, st.target, st.partition, last.Downstream+1, func(r *kgo.Record) bool {
		onTarget = append(onTarget, digested{r.Offset, recordDigest(r), r.Timestamp.UnixMilli()})
		return r.Offset+1 < tgtEnd
	})
	if err != nil {
		return 0, nil, err
	}
	p := pairing{s: s, st: st, onTarget: onTarget, srcNext: last.Upstream + 1}
	err = readRange(rctx, s.cfg.Source, st.topic, st.partition, p.srcNext, p.next)
	if errors.Is(err, kerr.OffsetOutOfRange) {
		err = s.reconcileGap(rctx, &p, err)
	}
	if err != nil {
		return p.i, nil, err
	}
	st.mu.Lock()
	failed, ferr := st.state == StateFailing, st.err
	st.mu.Unlock()
	if failed {
		return p.i, nil, ferr
	}
	if p.i < len(onTarget) {
		return p.i, nil, fmt.Errorf("mirror: target %s[%d] holds %d records after offset %d but the source has only %d after offset %d",
			st.target, st.partition, len(onTarget), last.Downstream, p.i, last.Upstream)
	}
	return p.paired, p.runs, nil
}

// pairing walks the source records after the last sync alongside the
// target records that followed it.
type pairing struct {
	s        *session
	st       *partitionState
	onTarget []digested
	i        int   // the next target record to pair
	paired   int   // pairs made
	srcNext  int64 // the source offset after the last one paired
	seek     bool  // skip target records until one matches the source
	runs     []OffsetSync
	err      error
}

func (p *pairing) next(r *kgo.Record) bool {
	if p.i >= len(p.onTarget) {
		return false
	}
	st := p.st
	if p.s.cfg.Mirror.OnRecordTooLarge == TooLargeSkip && p.s.tooLarge(st, r) != nil {
		return true // skipped when it was first copied: not on the target
	}
	same := func(t digested) bool { return recordDigest(r) == t.digest && r.Timestamp.UnixMilli() == t.ts }
	if p.seek {
		// The target records before the first copy of this source record
		// are copies of deleted ones; none at all: every one is.
		p.seek = false
		k := p.i
		for k < len(p.onTarget) && !same(p.onTarget[k]) {
			k++
		}
		p.i = k
		if k == len(p.onTarget) {
			return false
		}
	}
	t := p.onTarget[p.i]
	if !same(t) {
		err := fmt.Errorf("mirror: target %s[%d] offset %d does not hold source %s[%d] offset %d: the target was written by someone else",
			st.target, st.partition, t.offset, st.topic, st.partition, r.Offset)
		st.fail(err)
		return false
	}
	st.mu.Lock()
	if st.offsets.add(r.Offset, t.offset) {
		p.runs = append(p.runs, OffsetSync{Topic: st.topic, Partition: st.partition, Upstream: r.Offset, Downstream: t.offset})
	}
	st.records++
	st.mu.Unlock()
	p.i++
	p.paired++
	p.srcNext = r.Offset + 1
	return p.i < len(p.onTarget)
}

// reconcileGap handles a source that deleted records after the last pair:
// the offsets from there to the source's log start are a gap, reported as
// the copier reports one. With on_source_gap = "stop" the partition stops;
// with "skip" the target records still unpaired are matched from the log
// start on (those before the first match are copies of deleted records)
// and the copy resumes after them.
func (s *session) reconcileGap(ctx context.Context, p *pairing, cause error) error {
	st := p.st
	starts, err := s.srcAdm.ListStartOffsets(ctx, st.topic)
	if err != nil {
		return fmt.Errorf("mirror: start offsets of source %s: %w (after %w)", st.topic, err, cause)
	}
	start, err := lookupOffset(starts, st.topic, st.partition)
	if err != nil {
		return err
	}
	if start <= p.srcNext {
		return fmt.Errorf("mirror: source %s[%d] answered offset %d out of range but its log start is %d: %w",
			st.topic, st.partition, p.srcNext, start, cause)
	}
	lost := start - p.srcNext
	st.met.gap.Add(float64(lost))
	gerr := fmt.Errorf("mirror: source %s[%d] deleted offsets %d to %d (%d offsets) before the mirror recorded them (%d target records after its last offset sync are copies of some of them)",
		st.topic, st.partition, p.srcNext, start-1, lost, len(p.onTarget)-p.i)
	if s.cfg.Mirror.OnSourceGap == GapStop {
		s.m.log.Error("partition stopped (on_source_gap = stop)", "topic", st.topic, "partition", st.partition, "err", gerr)
		return gerr
	}
	s.m.log.Error("skipping deleted offsets (on_source_gap = skip)", "topic", st.topic, "partition", st.partition, "err", gerr)
	p.seek = true
	p.srcNext = start
	ends, err := s.srcAdm.ListEndOffsets(ctx, st.topic)
	if err != nil {
		return fmt.Errorf("mirror: end offsets of source %s: %w", st.topic, err)
	}
	end, err := lookupOffset(ends, st.topic, st.partition)
	if err != nil {
		return err
	}
	if end > start { // else nothing follows the gap yet: no target record can be its copy
		if err := readRange(ctx, s.cfg.Source, st.topic, st.partition, start, p.next); err != nil {
			return err
		}
	}
	p.i = len(p.onTarget) // every target record is a copy, paired or of a deleted record
	st.mu.Lock()
	st.offsets.skipTo(p.srcNext)
	st.err = gerr
	st.mu.Unlock()
	return nil
}

// readRange reads one partition from offset (read_committed), calling fn for
// each record until fn returns false. It fails if the offset is out of range.
func readRange(ctx context.Context, c Cluster, topic string, p int32, from int64, fn func(*kgo.Record) bool) error {
	cl, err := newClient(c, "gregor-mirror-resume",
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(from)}}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mirror: read %s[%d] from %d: %w", topic, p, from, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.Canceled) {
				ferr = err
			}
		})
		if ferr != nil {
			return fmt.Errorf("mirror: read %s[%d] from %d: %w", topic, p, from, ferr)
		}
		more := true
		fs.EachRecord(func(r *kgo.Record) {
			if more {
				more = fn(r)
			}
		})
		if !more {
			return nil
		}
	}
}
