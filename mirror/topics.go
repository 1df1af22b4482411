package mirror

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// excludedConfigs are topic configs never copied, as in MirrorMaker 2:
// replication throttles and durability settings belong to each cluster, and
// Gregor's extension configs name extensions the target may not have.
var excludedConfigs = map[string]bool{
	"follower.replication.throttled.replicas": true,
	"leader.replication.throttled.replicas":   true,
	"min.insync.replicas":                     true,
	"unclean.leader.election.enable":          true,
	"message.timestamp.difference.max.ms":     true,
}

// configSynced reports whether a topic config is copied in mode.
func configSynced(mode, name string) bool {
	if excludedConfigs[name] || strings.HasPrefix(name, "gregor.") {
		return false
	}
	// A link copies batches as they are; a target that stamped its own
	// append time would change them.
	return !(mode == ModeLink && name == "message.timestamp.type")
}

// refresh discovers source topics and partitions, creates or grows their
// target topics, starts new partitions and syncs configs and ACLs.
func (s *session) refresh(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	srcTopics, err := s.srcAdm.ListTopics(rctx)
	if err != nil {
		return fmt.Errorf("mirror: list source topics: %w", err)
	}
	fromTarget := s.topicsFromTarget(rctx, srcTopics)
	skipped := map[string]string{}
	untranslated := map[string]string{}
	var selected []string
	for _, name := range srcTopics.Names() {
		why := s.m.pol.topicSkip(name, fromTarget)
		if why == "" && s.promoted[s.m.pol.TargetTopic(name)] {
			why = "promoted on the target"
		}
		if why != "" {
			skipped[name] = why
			continue
		}
		selected = append(selected, name)
	}
	sort.Strings(selected)
	dstTopics, err := s.dstAdm.ListTopics(rctx)
	if err != nil {
		return fmt.Errorf("mirror: list target topics: %w", err)
	}
	var existing []string
	for _, name := range selected {
		if dst, ok := dstTopics[s.m.pol.TargetTopic(name)]; ok && dst.Err == nil {
			existing = append(existing, dst.Topic)
		}
	}
	if err := s.loadTopicLimits(rctx, existing); err != nil {
		return err
	}
	var configs map[string]map[string]*string
	if s.cfg.Topics.SyncConfigs {
		configs = s.sourceConfigs(rctx, selected)
	}
	for _, name := range selected {
		src := srcTopics[name]
		n := int32(len(src.Partitions))
		if src.Err != nil || n == 0 {
			continue
		}
		target := s.m.pol.TargetTopic(name)
		dst, exists := dstTopics[target]
		dstN := int32(len(dst.Partitions))
		var spread int32
		switch {
		case exists && dst.Err == nil && dstN != n && (dstN > n || !s.cfg.Topics.GrowPartitions):
			if s.cfg.Mirror.Mode == ModeLink {
				skipped[name] = fmt.Sprintf("link mode keeps offsets and needs equal partition counts: target %s has %d partitions, the source %d",
					target, dstN, n)
				continue
			}
			spread = dstN
			untranslated[name] = fmt.Sprintf("target %s has %d partitions, the source %d: records are placed by key, group offsets are not translated",
				target, dstN, n)
			if configs != nil {
				s.syncConfigs(rctx, target, configs[name])
			}
		case !exists || dst.Err != nil:
			if err := s.markProvenance(rctx, name); err != nil {
				return err
			}
			if err := s.createTopic(rctx, target, n, s.newTopicConfigs(configs[name])); err != nil {
				return err
			}
			if err := s.loadTopicLimits(rctx, []string{target}); err != nil {
				return err
			}
		case int32(len(dst.Partitions)) < n:
			resp, err := s.dstAdm.CreatePartitions(rctx, int(n), target)
			if err == nil {
				err = resp.Error()
			}
			if err != nil {
				return fmt.Errorf("mirror: grow target %s to %d partitions: %w", target, n, err)
			}
		default:
			if configs != nil {
				s.syncConfigs(rctx, target, configs[name])
			}
			if s.cfg.Mirror.Mode == ModeLink && !s.started[topicPartition{name, 0}] {
				if err := s.claimLink(rctx, target); err != nil {
					return err
				}
			}
		}
		s.setSpread(name, n, spread)
		if err := s.startPartitions(rctx, name, n); err != nil {
			return err
		}
	}
	if s.cfg.Topics.SyncACLs && !s.aclsOff {
		s.syncACLs(rctx, selected)
	}
	if s.cfg.Topics.SyncDeletions {
		s.syncDeletions(rctx, srcTopics, dstTopics)
	}
	s.m.mu.Lock()
	s.m.skipped = skipped
	s.m.untranslated = untranslated
	s.m.mu.Unlock()
	return nil
}

// setSpread sets how partitions [0, n) of a source topic that this session
// has not started yet place their records: through the default partitioner
// over spread target partitions, or partition to partition (0). A started
// partition keeps its placement for the session, so that no key's records
// are reordered across a change of the target's partition count.
func (s *session) setSpread(topic string, n, spread int32) {
	for p := int32(0); p < n; p++ {
		if s.started[topicPartition{topic, p}] {
			continue
		}
		st := s.m.state(topic, p)
		st.mu.Lock()
		st.spread = spread
		st.mu.Unlock()
	}
}

// startPartitions starts partitions [0, n) of a source topic that this
// session has not started.
func (s *session) startPartitions(ctx context.Context, topic string, n int32) error {
	var parts []int32
	for p := int32(0); p < n; p++ {
		if !s.started[topicPartition{topic, p}] {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	switch s.cfg.Mirror.Mode {
	case ModeCopy:
		offsets, err := s.resumeCopy(ctx, topic, parts)
		if err != nil {
			return err
		}
		s.copier.add(topic, offsets)
	case ModeLink:
		for _, p := range parts {
			s.linker.start(topic, p)
		}
	}
	for _, p := range parts {
		s.started[topicPartition{topic, p}] = true
	}
	s.topicSizes[topic] = n
	s.m.log.Info("mirroring partitions", "topic", topic, "target", s.m.pol.TargetTopic(topic), "partitions", parts)
	return nil
}

// markProvenance records, before the target topic exists, that the mirror
// writes it from this source: a mirror running the other way reads these
// syncs and will not copy the topic back (with identity names nothing else
// shows where a topic came from). The record has partition -1 and is not a
// position.
func (s *session) markProvenance(ctx context.Context, topic string) error {
	mark := OffsetSync{Topic: topic, Partition: -1, Upstream: -1, Downstream: -1}
	r := &kgo.Record{Topic: OffsetSyncsTopic(s.cfg.Source.Name), Partition: 0, Key: mark.Key(), Value: mark.Value()}
	if err := s.dst.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("mirror: record provenance of %s: %w", topic, err)
	}
	if s.created != nil {
		s.created[topic] = true
	}
	return nil
}

// topicsFromTarget lists the source topics that a mirror from the target
// into the source wrote, read from that mirror's offset syncs on the source.
// Mirroring them back would be a cycle.
func (s *session) topicsFromTarget(ctx context.Context, srcTopics kadm.TopicDetails) map[string]bool {
	name := OffsetSyncsTopic(s.cfg.Target.Name)
	if _, ok := srcTopics[name]; !ok {
		// ListTopics hides internal-looking names on some brokers; ask.
		md, err := s.srcAdm.ListTopicsWithInternal(ctx, name)
		if err != nil || md[name].Err != nil {
			return nil
		}
	}
	out := map[string]bool{}
	err := readAll(ctx, s.cfg.Source, name, maxSyncRecords, func(r *kgo.Record) error {
		if sync, err := DecodeOffsetSync(r.Key, r.Value); err == nil {
			out[sync.Topic] = true
		}
		return nil
	})
	if err != nil {
		s.m.log.Warn("reading the reverse mirror's offset syncs", "topic", name, "err", err)
	}
	return out
}

// sourceConfigs returns the topic configs set on each source topic (dynamic
// topic configs) that the mirror copies.
func (s *session) sourceConfigs(ctx context.Context, topics []string) map[string]map[string]*string {
	if len(topics) == 0 {
		return nil
	}
	rcs, err := s.srcAdm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		s.m.log.Warn("describe source topic configs", "err", err)
		return nil
	}
	out := map[string]map[string]*string{}
	for _, rc := range rcs {
		if rc.Err != nil {
			continue
		}
		m := map[string]*string{}
		for _, c := range rc.Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig && !c.Sensitive && configSynced(s.cfg.Mirror.Mode, c.Key) {
				m[c.Key] = c.Value
			}
		}
		out[rc.Name] = m
	}
	return out
}

// syncConfigs sets on a target topic the source configs it lacks or holds
// with another value, and deletes the target's overrides of synced configs
// that the source no longer overrides (want nil: the source's configs are
// unknown, nothing is changed).
func (s *session) syncConfigs(ctx context.Context, target string, want map[string]*string) {
	if want == nil {
		return
	}
	rcs, err := s.dstAdm.DescribeTopicConfigs(ctx, target)
	if err != nil {
		s.m.log.Warn("describe target topic configs", "topic", target, "err", err)
		return
	}
	have := map[string]string{}
	var alter []kadm.AlterConfig
	for _, rc := range rcs {
		if rc.Err != nil {
			s.m.log.Warn("describe target topic configs", "topic", target, "err", rc.Err)
			return
		}
		for _, c := range rc.Configs {
			if c.Value != nil {
				have[c.Key] = *c.Value
			}
			if _, kept := want[c.Key]; !kept && c.Source == kmsg.ConfigSourceDynamicTopicConfig && !c.Sensitive &&
				configSynced(s.cfg.Mirror.Mode, c.Key) {
				alter = append(alter, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: c.Key})
			}
		}
	}
	for k, v := range want {
		if v == nil {
			continue
		}
		if cur, ok := have[k]; !ok || cur != *v {
			alter = append(alter, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: v})
		}
	}
	if len(alter) == 0 {
		return
	}
	sort.Slice(alter, func(i, j int) bool { return alter[i].Name < alter[j].Name })
	resps, err := s.dstAdm.AlterTopicConfigs(ctx, alter, target)
	if err == nil {
		for _, r := range resps {
			if r.Err != nil {
				err = fmt.Errorf("%w (%s)", r.Err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		s.m.log.Warn("sync topic configs", "topic", target, "err", err)
		return
	}
	s.m.log.Info("synced topic configs", "topic", target, "configs", len(alter))
}
