package mirror

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// loadCreated reads this mirror's provenance marks from the offset syncs
// topic on the target: the source topics whose target topics it created.
func (s *session) loadCreated(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	created := map[string]bool{}
	err := readAll(rctx, s.cfg.Target, OffsetSyncsTopic(s.cfg.Source.Name), maxSyncRecords, func(r *kgo.Record) error {
		if sync, err := DecodeOffsetSync(r.Key, r.Value); err == nil && sync.Partition < 0 && sync.Topic != "" {
			created[sync.Topic] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mirror: read %s: %w", OffsetSyncsTopic(s.cfg.Source.Name), err)
	}
	s.created = created
	return nil
}

// syncDeletions deletes the target topics of deleted source topics that
// this mirror created. A topic missing from the listing is asked for by
// name first, so that an incomplete listing deletes nothing.
func (s *session) syncDeletions(ctx context.Context, srcTopics, dstTopics kadm.TopicDetails) {
	for name := range s.created {
		if _, ok := srcTopics[name]; ok {
			continue
		}
		target := s.m.pol.TargetTopic(name)
		if s.promoted[target] {
			continue // it belongs to the target now
		}
		if _, ok := dstTopics[target]; !ok {
			delete(s.created, name)
			continue
		}
		md, err := s.srcAdm.ListTopics(ctx, name)
		if err != nil || !errors.Is(md[name].Err, kerr.UnknownTopicOrPartition) {
			continue // not known to be deleted
		}
		if err := s.deleteTarget(ctx, name, target); err != nil {
			s.m.log.Warn("deleting the target of a deleted source topic", "topic", name, "target", target, "err", err)
			continue
		}
		delete(s.created, name)
		s.m.log.Info("source topic deleted: target topic deleted", "topic", name, "target", target)
	}
}

// deleteTarget stops a source topic's partitions and deletes its target
// topic.
func (s *session) deleteTarget(ctx context.Context, topic, target string) error {
	n := s.topicSizes[topic]
	var parts []int32
	for p := int32(0); p < n; p++ {
		parts = append(parts, p)
		delete(s.started, topicPartition{topic, p})
		delete(s.syncs, topicPartition{topic, p}) // a re-created source topic starts afresh
	}
	delete(s.topicSizes, topic)
	if s.copier != nil && len(parts) > 0 {
		s.copier.remove(topic, parts...)
	}
	if s.linker != nil {
		for _, p := range parts {
			s.linker.remove(topic, p)
		}
	}
	for _, p := range parts {
		st := s.m.state(topic, p)
		st.mu.Lock()
		st.state, st.err = StateDeleted, nil
		st.mu.Unlock()
	}
	resp, err := s.dstAdm.DeleteTopics(ctx, target)
	if err == nil {
		var r kadm.DeleteTopicResponse
		if r, err = resp.On(target, nil); err == nil && r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			err = r.Err
		}
	}
	if err != nil {
		return fmt.Errorf("mirror: delete target topic %s: %w", target, err)
	}
	return nil
}
