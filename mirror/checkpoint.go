package mirror

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func isAlreadyExists(err error) bool { return errors.Is(err, kerr.TopicAlreadyExists) }

// checkpoint translates the committed offsets of selected source groups on
// mirrored partitions, writes a checkpoint for each one that changed and,
// with groups.sync_offsets, commits them into target groups that have no
// members. Offsets that cannot be translated yet (not mirrored so far) are
// left for a later round: a checkpoint never points past a record the
// target does not hold.
func (s *session) checkpoint(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	listed, err := s.srcAdm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("mirror: list source groups: %w", err)
	}
	var groups []string
	for _, g := range listed.Groups() {
		if s.m.pol.groupSelected(g) {
			groups = append(groups, g)
		}
	}
	sort.Strings(groups)
	if len(groups) == 0 {
		return nil
	}
	fetched := s.srcAdm.FetchManyOffsets(ctx, groups...)
	translated := map[string]kadm.Offsets{}
	var recs []*kgo.Record
	for _, g := range groups {
		resp, ok := fetched[g]
		if !ok || resp.Err != nil {
			continue
		}
		resp.Fetched.Each(func(o kadm.OffsetResponse) {
			if o.Err != nil || o.At < 0 {
				return
			}
			st, ok := s.m.lookup(o.Topic, o.Partition)
			if !ok {
				return
			}
			down, ok := st.translate(s.cfg.Mirror.Mode, o.At)
			if !ok {
				return
			}
			offs := translated[g]
			if offs == nil {
				offs = kadm.Offsets{}
				translated[g] = offs
			}
			offs.Add(kadm.Offset{Topic: st.target, Partition: o.Partition, At: down, LeaderEpoch: -1, Metadata: o.Metadata})
			k := checkpointKey{g, st.target, o.Partition}
			if prev, ok := s.lastCkpt[k]; ok && prev == o.At {
				return
			}
			s.lastCkpt[k] = o.At
			c := Checkpoint{Group: g, Topic: st.target, Partition: o.Partition, Upstream: o.At, Downstream: down, Metadata: o.Metadata}
			recs = append(recs, &kgo.Record{Topic: CheckpointsTopic(s.cfg.Source.Name), Partition: 0, Key: c.Key(), Value: c.Value()})
		})
	}
	if len(recs) > 0 {
		if err := s.dst.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			for _, r := range recs { // write them again next round
				if c, derr := DecodeCheckpoint(r.Key, r.Value); derr == nil {
					delete(s.lastCkpt, checkpointKey{c.Group, c.Topic, c.Partition})
				}
			}
			return fmt.Errorf("mirror: write checkpoints: %w", err)
		}
		s.m.met.checkpts.Add(float64(len(recs)))
	}
	if s.cfg.Groups.SyncOffsets {
		return s.syncGroupOffsets(ctx, translated)
	}
	return nil
}

// syncGroupOffsets commits translated offsets into target groups that have
// no members, only where they move the group forward: a group that already
// consumed further on the target is never rewound.
func (s *session) syncGroupOffsets(ctx context.Context, translated map[string]kadm.Offsets) error {
	if len(translated) == 0 {
		return nil
	}
	groups := make([]string, 0, len(translated))
	for g := range translated {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	described, err := s.dstAdm.DescribeGroups(ctx, groups...)
	if err != nil {
		return fmt.Errorf("mirror: describe target groups: %w", err)
	}
	current := s.dstAdm.FetchManyOffsets(ctx, groups...)
	var errs []error
	for _, g := range groups {
		if d, ok := described[g]; ok && d.Err == nil && len(d.Members) > 0 {
			continue // active on the target: its members own its offsets
		}
		have := current[g]
		commit := kadm.Offsets{}
		translated[g].Each(func(o kadm.Offset) {
			if have.Err == nil {
				if cur, ok := have.Fetched.Lookup(o.Topic, o.Partition); ok && cur.Err == nil && cur.At >= o.At {
					return
				}
			}
			commit.Add(o)
		})
		if len(commit) == 0 {
			continue
		}
		resp, err := s.dstAdm.CommitOffsets(ctx, g, commit)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("mirror: sync offsets of group %s: %w", g, err))
			continue
		}
		n := 0
		commit.Each(func(kadm.Offset) { n++ })
		s.m.met.synced.Add(float64(n))
	}
	return errors.Join(errs...)
}
