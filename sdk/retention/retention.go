// Package retention is the retention contract: given what the broker knows
// about one partition's log (its segments, offsets, the committed offsets of
// consumer groups and the current time), decide how many of the oldest
// segments may be deleted. A policy only decides; the broker deletes, never
// beyond the high watermark and never the active segment, whatever a policy
// answers.
package retention

import (
	"context"
	"errors"
	"fmt"
)

// Segment describes one segment of a partition's log.
type Segment struct {
	// BaseOffset is the offset of the segment's first record (and its name).
	BaseOffset int64
	// NextOffset is one past the segment's last offset: the next segment's
	// base offset, or the log end offset for the active segment.
	NextOffset int64
	// SizeBytes is the size of the segment's .log file.
	SizeBytes int64
	// LargestTimestampMs is the largest record timestamp in the segment in
	// milliseconds since the Unix epoch, or -1 when it holds no timestamp.
	LargestTimestampMs int64
}

// GroupOffset is a consumer group's committed offset for the partition:
// the offset of the next record the group will read. Offset is -1 when the
// group has committed nothing for the partition.
type GroupOffset struct {
	Group  string
	Offset int64
}

// Partition is everything a policy sees of one partition.
type Partition struct {
	Topic     string
	Partition int32
	// Segments lists the segments oldest first; the last is the active one.
	Segments       []Segment
	LogStartOffset int64
	LogEndOffset   int64
	HighWatermark  int64
	// Groups holds the committed offsets of the consumer groups the policy
	// asked for (see GroupInterest), or of every group that committed an
	// offset for this partition when the policy does not say.
	Groups []GroupOffset
	// NowMs is the broker's clock in milliseconds since the Unix epoch.
	NowMs int64
}

// Policy decides how many leading segments of a partition may be deleted.
// DeletableSegments returns a count in [0, len(p.Segments)); the broker
// clamps it further (the active segment and anything at or past the high
// watermark stay). An error keeps every segment this round and is reported.
type Policy interface {
	DeletableSegments(ctx context.Context, p Partition) (int, error)
}

// GroupInterest is implemented by a policy that only needs the committed
// offsets of some groups; the broker then fills Partition.Groups with exactly
// those groups (Offset -1 for a group with no commit).
type GroupInterest interface {
	Groups() []string
}

// Func adapts a function to the Policy interface.
type Func func(ctx context.Context, p Partition) (int, error)

// DeletableSegments calls f.
func (f Func) DeletableSegments(ctx context.Context, p Partition) (int, error) { return f(ctx, p) }

// ErrOutOfRange is returned (wrapped) when a policy answers a count outside
// [0, len(Segments)).
var ErrOutOfRange = errors.New("deletable segment count out of range")

// Check validates a policy's answer n for p: 0 ≤ n < len(p.Segments), or
// n == 0 for a partition without segments.
func Check(p Partition, n int) error {
	limit := len(p.Segments) - 1
	if limit < 0 {
		limit = 0
	}
	if n < 0 || n > limit {
		return fmt.Errorf("retention: %s-%d: %d of %d segments: %w", p.Topic, p.Partition, n, len(p.Segments), ErrOutOfRange)
	}
	return nil
}

// ConsumedByAll counts the leading segments every group in p.Groups has
// read past: a segment goes when each group's committed offset is at or past
// its NextOffset. A group with no commit (Offset -1) keeps everything; with no
// groups at all, nothing is deletable. The active segment always stays.
func ConsumedByAll(p Partition) int {
	if len(p.Groups) == 0 {
		return 0
	}
	low := p.Groups[0].Offset
	for _, g := range p.Groups[1:] {
		if g.Offset < low {
			low = g.Offset
		}
	}
	n := 0
	for n < len(p.Segments)-1 && p.Segments[n].NextOffset <= low {
		n++
	}
	return n
}
