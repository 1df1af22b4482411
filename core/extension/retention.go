package extension

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gregorbroker/gregor/core/config"
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

// Retention is a named retention policy with its fallback rule, time limit
// and statistics applied by Retain.
type Retention struct {
	Name    string
	policy  retention.Policy // counted by stats
	builtin bool             // fallback = builtin: retention.ms and retention.bytes
	timeout time.Duration
	logger  *slog.Logger
	stats   *Stats
	warn    warnEvery
}

// Retained is what one retention round did.
type Retained struct {
	// Policy is the topic's retention extension; empty for the built-in.
	Policy string
	// Segments is how many leading segments went.
	Segments int
	// PolicyErr is the policy's failure; Fallback says the built-in
	// retention ran instead (fallback = builtin). With fallback = reject
	// nothing was deleted.
	PolicyErr error
	Fallback  bool
}

// Retain runs one retention round over l for a topic with configs: the
// topic's retention policy when it names one, with its fallback when the
// policy fails (builtin: retention.ms and retention.bytes; reject: nothing
// is deleted), else the built-in retention. Nothing goes past
// highWatermark. A topic naming a policy broker.toml does not declare is
// an error and keeps its data: deleting by another rule could remove what
// the named policy meant to keep. A nil Set runs the built-in.
func (s *Set) Retain(ctx context.Context, configs map[string]string, l *log.Log, highWatermark int64, offsets GroupOffsets, nowMs int64) (Retained, error) {
	if s == nil {
		n, err := l.ApplyRetentionBelow(highWatermark)
		return Retained{Segments: n}, err
	}
	name, _, ok, err := s.cfg.ExtensionFor(ConfigRetention, configs[ConfigRetention], config.KindRetention, config.BuiltinRetention)
	if err != nil {
		return Retained{}, err
	}
	if !ok {
		n, err := l.ApplyRetentionBelow(highWatermark)
		return Retained{Segments: n}, err
	}
	r := s.policies[name]
	out := Retained{Policy: name}
	if !l.Config().Delete {
		return out, nil
	}
	cctx, cancel := withTimeout(ctx, r.timeout)
	n, err := ApplyPolicy(cctx, r.policy, l, highWatermark, offsets, nowMs)
	cancel()
	if err == nil {
		out.Segments = n
		return out, nil
	}
	out.PolicyErr = err
	if !r.builtin {
		if r.warn.allow() {
			r.logger.Warn("retention policy failed; fallback reject deletes nothing", "log", l.String(), "err", err)
		}
		return out, nil
	}
	r.stats.Fallback()
	out.Fallback = true
	if r.warn.allow() {
		r.logger.Warn("retention policy failed; applying retention.ms and retention.bytes", "log", l.String(), "err", err)
	}
	out.Segments, err = l.ApplyRetentionBelow(highWatermark)
	return out, err
}
