package mirror

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ClusterStatus is a mirror's progress as both clusters show it, read
// without the mirror process: positions from the offset syncs (copy mode)
// or the target's end offsets (link mode), source end offsets, the last
// heartbeat and promoted topics.
type ClusterStatus struct {
	Status
	// LastHeartbeat is the newest heartbeat of this source and target;
	// zero when none was found.
	LastHeartbeat time.Time
	// Promoted lists promoted target topics.
	Promoted []string
}

// ReadStatus reads a mirror's progress from its clusters.
func ReadStatus(ctx context.Context, cfg Config) (ClusterStatus, error) {
	if err := cfg.Validate(); err != nil {
		return ClusterStatus{}, err
	}
	pol := newPolicy(cfg)
	out := ClusterStatus{Status: Status{Name: cfg.Source.Name + "->" + cfg.Target.Name, Source: cfg.Source.Name,
		Target: cfg.Target.Name, Mode: cfg.Mirror.Mode, Skipped: map[string]string{}}}
	src, err := newClient(cfg.Source, "gregor-mirror-status")
	if err != nil {
		return out, err
	}
	defer src.Close()
	dst, err := newClient(cfg.Target, "gregor-mirror-status")
	if err != nil {
		return out, err
	}
	defer dst.Close()
	srcAdm, dstAdm := kadm.NewClient(src), kadm.NewClient(dst)

	topics, err := srcAdm.ListTopics(ctx)
	if err != nil {
		return out, fmt.Errorf("mirror: list source topics: %w", err)
	}
	promoted := map[string]bool{}
	err = readAll(ctx, cfg.Target, LinkStateTopic(cfg.Source.Name), maxSyncRecords, func(r *kgo.Record) error {
		promoted[string(r.Key)] = true
		return nil
	})
	if err != nil {
		return out, err
	}
	for t := range promoted {
		out.Promoted = append(out.Promoted, t)
	}
	sort.Strings(out.Promoted)

	positions := map[topicPartition]int64{}
	if cfg.Mirror.Mode == ModeCopy {
		err = readAll(ctx, cfg.Target, OffsetSyncsTopic(cfg.Source.Name), maxSyncRecords, func(r *kgo.Record) error {
			if s, err := DecodeOffsetSync(r.Key, r.Value); err == nil && s.Partition >= 0 {
				positions[topicPartition{s.Topic, s.Partition}] = s.Upstream + 1
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	recorded, err := readStatuses(ctx, cfg)
	if err != nil {
		return out, err
	}
	var selected []string
	for _, name := range topics.Names() {
		if why := pol.topicSkip(name, nil); why != "" {
			out.Skipped[name] = why
			continue
		}
		selected = append(selected, name)
	}
	if len(selected) > 0 {
		srcEnds, err := srcAdm.ListEndOffsets(ctx, selected...)
		if err != nil {
			return out, fmt.Errorf("mirror: source end offsets: %w", err)
		}
		targets := make([]string, 0, len(selected))
		for _, t := range selected {
			targets = append(targets, pol.TargetTopic(t))
		}
		dstEnds, err := dstAdm.ListEndOffsets(ctx, targets...)
		if err != nil {
			return out, fmt.Errorf("mirror: target end offsets: %w", err)
		}
		srcEnds.Each(func(o kadm.ListedOffset) {
			if o.Err != nil {
				return
			}
			target := pol.TargetTopic(o.Topic)
			ps := PartitionStatus{Topic: o.Topic, Partition: o.Partition, TargetTopic: target, SourceEnd: o.Offset, State: StateMirroring}
			pos, known := positions[topicPartition{o.Topic, o.Partition}]
			if cfg.Mirror.Mode == ModeLink {
				d, ok := dstEnds.Lookup(target, o.Partition)
				pos, known = d.Offset, ok && d.Err == nil
			}
			if !known {
				ps.State = "not started"
			}
			if pr, ok := recorded[topicPartition{o.Topic, o.Partition}]; ok {
				pr.apply(&ps)
			}
			if promoted[target] {
				ps.State = StatePromoted
			}
			ps.Position = pos
			if o.Offset > pos {
				ps.Lag = o.Offset - pos
			}
			out.Partitions = append(out.Partitions, ps)
		})
	}
	sort.Slice(out.Partitions, func(i, j int) bool {
		a, b := out.Partitions[i], out.Partitions[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	err = readAll(ctx, cfg.Target, HeartbeatsTopic, maxSyncRecords, func(r *kgo.Record) error {
		if hb, err := DecodeHeartbeat(r.Key, r.Value); err == nil && hb.Source == cfg.Source.Name && hb.Target == cfg.Target.Name {
			if t := time.UnixMilli(hb.Timestamp); t.After(out.LastHeartbeat) {
				out.LastHeartbeat = t
			}
		}
		return nil
	})
	return out, err
}
