package mirror

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// txnTimeout bounds one copy transaction on the target; a mirror killed
// inside one leaves it to be aborted by the next mirror's InitProducerId,
// or by the coordinator after this long.
const txnTimeout = time.Minute

// TransactionalID is the target transactional id of an exactly-once copy
// mirror: stable across restarts, so that a restarted mirror fences the one
// it replaces and aborts its open transaction.
func TransactionalID(cfg Config) string {
	return "gregor-mirror-" + cfg.Source.Name + "-" + cfg.Target.Name
}

// newTxnProducer is the exactly-once copy's own target client: every
// produce of a transactional client must be in a transaction, so the
// session's other writes (heartbeats, checkpoints) keep their own client.
func newTxnProducer(cfg Config, limits *targetLimits) (*kgo.Client, error) {
	return newClient(cfg.Target, "gregor-mirror-"+cfg.Source.Name,
		kgo.TransactionalID(TransactionalID(cfg)),
		kgo.TransactionTimeout(txnTimeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(time.Duration(cfg.Mirror.LingerMs)*time.Millisecond),
		kgo.ProducerBatchMaxBytesFn(limits.batchMax),
		kgo.MaxBufferedRecords(50000),
	)
}

// written is a record the current transaction wrote: source offset up at
// target offset down.
type written struct {
	up, down int64
	size     int
	ts       time.Time
}

// transact copies one poll's records in one target transaction, with an
// offset sync for every run they start and one for each partition's last
// record, so that the syncs on the target always describe exactly the
// committed records. The offset maps learn the records only after the
// commit. Any failure aborts the transaction and ends the session: the
// next one resumes from the committed syncs.
func (c *copier) transact(ctx context.Context, fs kgo.Fetches) error {
	type part struct {
		st   *partitionState
		recs []*kgo.Record
	}
	var parts []part
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
		if running && len(fp.Records) > 0 {
			parts = append(parts, part{st, fp.Records})
		}
	})
	if len(parts) == 0 {
		return nil
	}
	txn := c.txn
	if err := txn.BeginTransaction(); err != nil {
		return fmt.Errorf("mirror: begin transaction: %w", err)
	}
	abort := func(cause error) error {
		actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = txn.AbortBufferedRecords(actx)
		if err := txn.EndTransaction(actx, kgo.TryAbort); err != nil {
			return fmt.Errorf("mirror: abort after %w: %w", cause, err)
		}
		return cause
	}
	var mu sync.Mutex // guards wrote and perr
	wrote := make([][]written, len(parts))
	var perr error
	spread := make([]int32, len(parts))
	for i, p := range parts {
		spread[i] = p.st.spreadTo()
		for _, src := range p.recs {
			if !c.admit(p.st, src) {
				if !p.st.running() {
					break
				}
				continue
			}
			size := recordSize(src)
			out := &kgo.Record{Topic: p.st.target, Partition: src.Partition, Key: src.Key, Value: src.Value,
				Headers: src.Headers, Timestamp: src.Timestamp}
			if spread[i] > 0 {
				out.Partition = spreadPartition(src.Key, src.Partition, spread[i])
			}
			up, ts := src.Offset, src.Timestamp
			txn.Produce(ctx, out, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					if perr == nil {
						perr = fmt.Errorf("mirror: write %s[%d] (source offset %d) to %s: %w", p.st.topic, p.st.partition, up, p.st.target, err)
					}
					return
				}
				wrote[i] = append(wrote[i], written{up: up, down: r.Offset, size: size, ts: ts})
			})
		}
	}
	if err := txn.Flush(ctx); err != nil {
		return abort(fmt.Errorf("mirror: flush transaction: %w", err))
	}
	if perr != nil {
		return abort(perr)
	}
	// The syncs follow what the offset maps will hold after the commit.
	var syncs []*kgo.Record
	for i, p := range parts {
		ws := wrote[i]
		if len(ws) == 0 {
			continue
		}
		if spread[i] > 0 {
			// Positions only; the transaction commits every record at
			// once, so the highest source offset is the position.
			var top int64 = -1
			for _, w := range ws {
				top = max(top, w.up)
			}
			sy := OffsetSync{Topic: p.st.topic, Partition: p.st.partition, Upstream: top, Downstream: -1}
			syncs = append(syncs, &kgo.Record{Topic: OffsetSyncsTopic(c.s.cfg.Source.Name), Partition: 0,
				Key: sy.Key(), Value: sy.Value()})
			continue
		}
		p.st.mu.Lock()
		sim := p.st.offsets.tail()
		p.st.mu.Unlock()
		for j, w := range ws {
			if sim.add(w.up, w.down) || j == len(ws)-1 {
				sy := OffsetSync{Topic: p.st.topic, Partition: p.st.partition, Upstream: w.up, Downstream: w.down}
				syncs = append(syncs, &kgo.Record{Topic: OffsetSyncsTopic(c.s.cfg.Source.Name), Partition: 0,
					Key: sy.Key(), Value: sy.Value()})
			}
		}
	}
	if err := txn.ProduceSync(ctx, syncs...).FirstErr(); err != nil {
		return abort(fmt.Errorf("mirror: write offset syncs: %w", err))
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return abort(fmt.Errorf("mirror: commit: %w", err))
	}
	now := c.s.m.opts.Now()
	for i, p := range parts {
		ws := wrote[i]
		if len(ws) == 0 {
			p.st.mu.Lock()
			p.st.passSkips()
			p.st.mu.Unlock()
			continue
		}
		st := p.st
		st.mu.Lock()
		if spread[i] > 0 {
			// Records spread over target partitions are acknowledged
			// out of source order; ws is in acknowledgement order.
			var top int64 = -1
			for _, w := range ws {
				top = max(top, w.up)
			}
			st.offsets.skipTo(top + 1)
			ws[len(ws)-1].up = top
		} else {
			for _, w := range ws {
				st.offsets.add(w.up, w.down)
			}
		}
		st.passSkips()
		st.wrote(now)
		st.records += int64(len(ws))
		last := ws[len(ws)-1]
		st.syncedUp, st.lastSync = last.up, now
		if st.fetchNext < last.up+1 {
			st.fetchNext = last.up + 1
		}
		st.mu.Unlock()
		size := 0
		for _, w := range ws {
			size += w.size
		}
		st.met.records.Add(float64(len(ws)))
		st.met.bytes.Add(float64(size))
		age := now.Sub(last.ts).Seconds()
		st.met.age.Set(age)
		st.met.latency.Observe(age)
	}
	return nil
}

// tail is a copy of the map's position and last run: enough for add to
// tell whether further records continue that run.
func (m *offsetMap) tail() offsetMap {
	t := offsetMap{srcNext: m.srcNext, tgtNext: m.tgtNext}
	if n := len(m.runs); n > 0 {
		t.runs = []run{m.runs[n-1]}
	}
	return t
}

// fence makes this session the exactly-once writer: initialising the
// transactional producer fences a previous mirror and aborts its open
// transaction. A committed barrier record then ends the offset syncs topic,
// so that reading it (read_committed, up to its end) stops at the barrier
// rather than wait on an aborted tail.
func (s *session) fence(ctx context.Context) error {
	ictx, cancel := context.WithTimeout(ctx, 2*txnTimeout)
	defer cancel()
	if _, _, err := s.copier.txn.ProducerID(ictx); err != nil {
		return fmt.Errorf("mirror: initialise transactional id %s: %w", TransactionalID(s.cfg), err)
	}
	barrier := OffsetSync{Partition: -1, Upstream: -1, Downstream: -1}
	r := &kgo.Record{Topic: OffsetSyncsTopic(s.cfg.Source.Name), Partition: 0, Key: barrier.Key(), Value: barrier.Value()}
	if err := s.dst.ProduceSync(ictx, r).FirstErr(); err != nil {
		return fmt.Errorf("mirror: write offset syncs barrier: %w", err)
	}
	return nil
}
