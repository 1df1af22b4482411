package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// StatusTopic is the compacted target topic where a mirror records each
// partition's state, last error and last successful write, so that
// "gregor mirror status", which reads the clusters and not the mirror
// process, shows a failing partition. Key {topic string, partition int32}
// as in offset syncs; value JSON (a Gregor record, not MirrorMaker 2's).
func StatusTopic(source string) string { return source + ".mirror-status.internal" }

// statusRefreshEvery bounds how stale a partition's recorded last write
// may grow while nothing else about it changes.
const statusRefreshEvery = 30 * time.Second

// partitionRecord is one partition's recorded status.
type partitionRecord struct {
	State       string `json:"state"`
	Error       string `json:"error,omitempty"`
	FailedAtMs  int64  `json:"failed_at_ms,omitempty"`
	RetryAtMs   int64  `json:"retry_at_ms,omitempty"`
	Failures    int    `json:"failures,omitempty"`
	LastWriteMs int64  `json:"last_write_ms,omitempty"`
	TooLarge    int64  `json:"too_large,omitempty"`
	WrittenMs   int64  `json:"written_ms"`
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// recordedStatus is what the session last wrote for a partition.
type recordedStatus struct {
	rec partitionRecord
	at  time.Time
}

// writeStatus records the partitions whose state, error or counts changed
// since the session last recorded them, and those whose last write moved
// and were recorded more than statusRefreshEvery ago. Losing a record only
// leaves the status stale, so failures are logged.
func (s *session) writeStatus(ctx context.Context) {
	now := s.m.opts.Now()
	s.m.mu.Lock()
	parts := make([]*partitionState, 0, len(s.m.parts))
	for _, st := range s.m.parts {
		parts = append(parts, st)
	}
	s.m.mu.Unlock()
	if s.statuses == nil {
		s.statuses = map[topicPartition]recordedStatus{}
	}
	var recs []*kgo.Record
	for _, st := range parts {
		st.mu.Lock()
		pr := partitionRecord{State: st.state, FailedAtMs: millis(st.failedAt), RetryAtMs: millis(st.retryAt),
			Failures: st.failures, LastWriteMs: millis(st.lastWrite), TooLarge: st.tooLarge, WrittenMs: now.UnixMilli()}
		if st.err != nil {
			pr.Error = st.err.Error()
		}
		tp := topicPartition{st.topic, st.partition}
		st.mu.Unlock()
		prev, ok := s.statuses[tp]
		cmp := prev.rec
		cmp.LastWriteMs, cmp.WrittenMs = pr.LastWriteMs, pr.WrittenMs
		if ok && cmp == pr && (prev.rec.LastWriteMs == pr.LastWriteMs || now.Sub(prev.at) < statusRefreshEvery) {
			continue
		}
		value, err := json.Marshal(pr)
		if err != nil {
			continue
		}
		key := OffsetSync{Topic: tp.topic, Partition: tp.partition}.Key()
		recs = append(recs, &kgo.Record{Topic: StatusTopic(s.cfg.Source.Name), Partition: 0, Key: key, Value: value})
		s.statuses[tp] = recordedStatus{rec: pr, at: now}
	}
	for _, r := range recs {
		s.dst.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil && ctx.Err() == nil {
				s.m.log.Warn("partition status not recorded", "err", err)
			}
		})
	}
}

// readStatuses reads the recorded partition statuses of a mirror.
func readStatuses(ctx context.Context, cfg Config) (map[topicPartition]partitionRecord, error) {
	out := map[topicPartition]partitionRecord{}
	err := readAll(ctx, cfg.Target, StatusTopic(cfg.Source.Name), maxSyncRecords, func(r *kgo.Record) error {
		k, err := DecodeOffsetSync(r.Key, make([]byte, 16))
		if err != nil {
			return nil // not a status key
		}
		var pr partitionRecord
		if err := json.Unmarshal(r.Value, &pr); err != nil {
			return nil
		}
		out[topicPartition{k.Topic, k.Partition}] = pr
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mirror: read %s: %w", StatusTopic(cfg.Source.Name), err)
	}
	return out, nil
}

// apply merges a recorded status into one read from the clusters.
func (pr partitionRecord) apply(ps *PartitionStatus) {
	if pr.State == StateFailing {
		ps.State = StateFailing
	}
	ps.Error = pr.Error
	ps.FailedAt, ps.RetryAt, ps.LastWrite = fromMillis(pr.FailedAtMs), fromMillis(pr.RetryAtMs), fromMillis(pr.LastWriteMs)
	ps.Failures, ps.TooLarge = pr.Failures, pr.TooLarge
}
