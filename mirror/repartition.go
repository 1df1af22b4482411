package mirror

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A topic whose target has another partition count than its source (and is
// not grown: topics.grow_partitions is false, or the target has more) is
// copied through the default partitioner: each keyed record goes to
// murmur2(key) mod the target's count, as a Kafka producer would place it,
// and a record without a key stays with the others of its source partition
// (source partition mod the count). Records of one source partition and one
// key therefore keep their order. Target offsets then say nothing about
// source offsets, so the topic's group offsets are not translated (no
// checkpoint, no group offset sync; the status lists the topic under
// Untranslated). Offset syncs of such partitions are positions only, with
// Downstream -1: a restart resumes after the last one and copies again what
// was acknowledged after it (at-least-once, at most syncEvery of records),
// since records spread over target partitions cannot be paired back.

// murmur2 is Kafka's murmur2 hash (seed 0x9747b28c), as its default
// partitioner computes it.
func murmur2(data []byte) uint32 {
	const (
		seed = uint32(0x9747b28c)
		m    = uint32(0x5bd1e995)
		r    = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	for ; len(data) >= 4; data = data[4:] {
		k := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16 | uint32(data[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// spreadPartition is the target partition of a record copied into a topic
// of n partitions through the default partitioner.
func spreadPartition(key []byte, srcPartition, n int32) int32 {
	if key == nil {
		return srcPartition % n
	}
	return int32((murmur2(key) & 0x7fffffff) % uint32(n))
}

// ackTracker finds the highest source offset below which every record
// handed to the target producer is acknowledged: records spread over
// several target partitions are acknowledged out of order.
type ackTracker struct {
	pending []int64 // source offsets in the order they were produced
	done    map[int64]bool
}

func (a *ackTracker) sent(up int64) { a.pending = append(a.pending, up) }

// acked records up's acknowledgement and returns the new highest offset
// with every record up to it acknowledged, ok false if it did not move.
func (a *ackTracker) acked(up int64) (last int64, ok bool) {
	if a.done == nil {
		a.done = map[int64]bool{}
	}
	a.done[up] = true
	for len(a.pending) > 0 && a.done[a.pending[0]] {
		last, ok = a.pending[0], true
		delete(a.done, last)
		a.pending = a.pending[1:]
	}
	if len(a.pending) == 0 {
		a.pending = nil // let the backing array go
	}
	return last, ok
}

// spreadTo returns the target partition count a partition is copied
// through the partitioner with, or 0 when it is copied partition to
// partition.
func (st *partitionState) spreadTo() int32 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.spread
}

// produceSpread writes one source record through the default partitioner;
// acknowledgements advance the partition's position (not an offset map).
func (c *copier) produceSpread(ctx context.Context, st *partitionState, src *kgo.Record, n int32) {
	up, ts := src.Offset, src.Timestamp
	size := recordSize(src)
	out := &kgo.Record{Topic: st.target, Partition: spreadPartition(src.Key, src.Partition, n), Key: src.Key,
		Value: src.Value, Headers: src.Headers, Timestamp: ts}
	st.mu.Lock()
	st.fetchNext = up + 1
	st.acks.sent(up)
	st.mu.Unlock()
	st.mu.Lock()
	st.inflight++
	st.mu.Unlock()
	c.writer(out.Partition).produce(ctx, out, func(_ *kgo.Record, err error) {
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
		st.records++
		st.wrote(now)
		done, moved := st.acks.acked(up)
		needSync := false
		if moved {
			st.offsets.skipTo(done + 1)
			if now.Sub(st.lastSync) >= syncEvery {
				needSync = true
				st.lastSync, st.syncedUp = now, done
			}
		}
		st.mu.Unlock()
		st.met.records.Inc()
		st.met.bytes.Add(float64(size))
		age := now.Sub(ts).Seconds()
		st.met.age.Set(age)
		st.met.latency.Observe(age)
		if needSync {
			c.writeSync(ctx, OffsetSync{Topic: st.topic, Partition: st.partition, Upstream: done, Downstream: -1})
		}
	})
}

func recordSize(r *kgo.Record) int {
	size := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		size += len(h.Key) + len(h.Value)
	}
	return size
}

// resumeSpread places a partition copied through the partitioner after its
// last position sync, or at the source's log start (writing a sync that
// marks it) when it has none. It returns the offset to consume from and
// the sync to write, if any.
func resumeSpread(st *partitionState, syncs []OffsetSync, srcStart int64) (int64, *OffsetSync) {
	from := srcStart
	var fresh *OffsetSync
	if len(syncs) > 0 {
		from = syncs[len(syncs)-1].Upstream + 1
	} else {
		fresh = &OffsetSync{Topic: st.topic, Partition: st.partition, Upstream: srcStart - 1, Downstream: -1}
	}
	st.mu.Lock()
	st.offsets.reset(from, 0)
	st.syncedUp = from - 1
	st.acks = ackTracker{}
	st.mu.Unlock()
	return from, fresh
}

// afterPositionSync drops the syncs up to a position-only one (a stretch
// copied through the partitioner): translation starts again after it. It
// reports the position-only sync when it is the last.
func afterPositionSync(syncs []OffsetSync) ([]OffsetSync, *OffsetSync) {
	for i := len(syncs) - 1; i >= 0; i-- {
		if syncs[i].Downstream < 0 {
			if i == len(syncs)-1 {
				return nil, &syncs[i]
			}
			return syncs[i+1:], nil
		}
	}
	return syncs, nil
}
