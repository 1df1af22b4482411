package extension

import (
	"context"
	"fmt"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// GroupOffsets gives committed offsets for a partition: of the named groups
// (Offset -1 for a group without a commit), or, when groups is nil, of every
// group with a commit for it.
type GroupOffsets func(groups []string, topic string, partition int32) ([]retention.GroupOffset, error)

// ApplyPolicy runs policy over one partition's log and deletes the leading
// segments it allows, never the active segment and never past
// highWatermark. It returns how many segments went. A policy error, or an
// answer out of range, deletes nothing and is returned.
func ApplyPolicy(ctx context.Context, policy retention.Policy, l *log.Log, highWatermark int64, offsets GroupOffsets, nowMs int64) (int, error) {
	segs := l.Segments()
	if len(segs) < 2 {
		return 0, nil
	}
	facts := retention.Partition{
		Topic:          l.Topic(),
		Partition:      l.Partition(),
		Segments:       make([]retention.Segment, len(segs)),
		LogStartOffset: l.LogStartOffset(),
		LogEndOffset:   l.LogEndOffset(),
		HighWatermark:  highWatermark,
		NowMs:          nowMs,
	}
	for i, s := range segs {
		facts.Segments[i] = retention.Segment{BaseOffset: s.BaseOffset, NextOffset: s.NextOffset,
			SizeBytes: s.Size, LargestTimestampMs: s.LargestTimestamp}
	}
	if offsets != nil {
		var groups []string
		if gi, ok := policy.(retention.GroupInterest); ok {
			groups = gi.Groups()
			if groups == nil {
				groups = []string{}
			}
		}
		g, err := offsets(groups, facts.Topic, facts.Partition)
		if err != nil {
			return 0, fmt.Errorf("extension: retention %s: committed offsets: %w", l, err)
		}
		facts.Groups = g
	}
	n, err := policy.DeletableSegments(ctx, facts)
	if err != nil {
		return 0, fmt.Errorf("extension: retention %s: %w", l, err)
	}
	if err := retention.Check(facts, n); err != nil {
		return 0, fmt.Errorf("extension: retention %s: %w", l, err)
	}
	// The segments that go must lie below the high watermark.
	for n > 0 && segs[n].BaseOffset > highWatermark {
		n--
	}
	if n == 0 {
		return 0, nil
	}
	if err := l.DeleteRecordsBefore(segs[n].BaseOffset); err != nil {
		return 0, fmt.Errorf("extension: retention %s: %w", l, err)
	}
	return n, nil
}
