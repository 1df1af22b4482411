package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Link states recorded per target topic in LinkStateTopic.
const (
	linkPromoted = "promoted" // asked for by an operator
	linkStopped  = "stopped"  // confirmed by the running mirror
)

// linkState is the value of a link-state record; the key is the target
// topic.
type linkState struct {
	State string `json:"state"`
	// At is when the state was written (Unix ms).
	At int64 `json:"at"`
	// Ends are the target partitions' end offsets when the mirror stopped
	// writing them (only in "stopped").
	Ends map[int32]int64 `json:"ends,omitempty"`
}

// loadPromoted reads the link-state topic into s.promoted.
func (s *session) loadPromoted(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	promoted := map[string]bool{}
	err := readAll(rctx, s.cfg.Target, LinkStateTopic(s.cfg.Source.Name), maxSyncRecords, func(r *kgo.Record) error {
		var ls linkState
		if err := json.Unmarshal(r.Value, &ls); err != nil {
			s.m.log.Warn("ignoring link-state record", "offset", r.Offset, "err", err)
			return nil
		}
		promoted[string(r.Key)] = ls.State == linkPromoted || ls.State == linkStopped
		return nil
	})
	if err != nil {
		return fmt.Errorf("mirror: read %s: %w", LinkStateTopic(s.cfg.Source.Name), err)
	}
	s.promoted = promoted
	return nil
}

// applyPromoted stops the partitions of newly promoted topics and confirms
// each with a "stopped" record carrying the target's end offsets.
func (s *session) applyPromoted() {
	for topic, n := range s.topicSizes {
		target := s.m.pol.TargetTopic(topic)
		if !s.promoted[target] {
			continue
		}
		var parts []int32
		for p := int32(0); p < n; p++ {
			parts = append(parts, p)
			delete(s.started, topicPartition{topic, p})
		}
		delete(s.topicSizes, topic)
		if s.copier != nil {
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
			st.state = StatePromoted
			st.mu.Unlock()
		}
		if err := s.confirmStopped(context.Background(), target); err != nil {
			s.m.log.Warn("promotion not confirmed", "topic", target, "err", err)
			continue
		}
		s.m.log.Info("topic promoted: no longer mirrored", "topic", target)
	}
}

// confirmStopped waits for the mirror's in-flight writes to the topic and
// records that it stopped.
func (s *session) confirmStopped(ctx context.Context, target string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.dst.Flush(ctx); err != nil {
		return err
	}
	ends, err := s.dstAdm.ListEndOffsets(ctx, target)
	if err != nil {
		return err
	}
	ls := linkState{State: linkStopped, At: s.m.opts.Now().UnixMilli(), Ends: map[int32]int64{}}
	ends.Each(func(o kadm.ListedOffset) { ls.Ends[o.Partition] = o.Offset })
	v, err := json.Marshal(ls)
	if err != nil {
		return err
	}
	r := &kgo.Record{Topic: LinkStateTopic(s.cfg.Source.Name), Partition: 0, Key: []byte(target), Value: v}
	return s.dst.ProduceSync(ctx, r).FirstErr()
}

// Promote asks the mirror of cfg to stop mirroring the given target topics
// so that they belong to the target (failover). It records the request on
// the target and waits up to wait for a running mirror to confirm that it
// stopped writing them; it returns the confirmed topics' end offsets.
// Topics not confirmed in time are stopped by the mirror when it next runs.
// In link mode it then deletes the topics' gregor.mirror.link config, which
// makes them writable and fences the link whether or not it confirmed.
func Promote(ctx context.Context, cfg Config, topics []string, wait time.Duration, now func() time.Time) (map[string]map[int32]int64, error) {
	if now == nil {
		now = time.Now
	}
	cl, err := newClient(cfg.Target, "gregor-mirror-promote", kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	stateTopic := LinkStateTopic(cfg.Source.Name)
	resp, err := adm.CreateTopic(ctx, 1, cfg.Topics.ReplicationFactor, map[string]*string{"cleanup.policy": strp("compact")}, stateTopic)
	if err == nil && resp.Err != nil && !isAlreadyExists(resp.Err) {
		err = resp.Err
	}
	if err != nil && !isAlreadyExists(err) {
		return nil, fmt.Errorf("mirror: create %s: %w", stateTopic, err)
	}
	start := now()
	var recs []*kgo.Record
	for _, t := range topics {
		v, _ := json.Marshal(linkState{State: linkPromoted, At: start.UnixMilli()})
		recs = append(recs, &kgo.Record{Topic: stateTopic, Partition: 0, Key: []byte(t), Value: v})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, fmt.Errorf("mirror: record promotion: %w", err)
	}
	first := recs[0].Offset
	confirmed, err := awaitStopped(ctx, cfg, topics, first, wait)
	if err != nil {
		return confirmed, err
	}
	if cfg.Mirror.Mode == ModeLink {
		if err := unlink(ctx, adm, topics); err != nil {
			return confirmed, err
		}
	}
	return confirmed, nil
}

// awaitStopped waits up to wait for the mirror's "stopped" records of
// topics written after offset first of the link-state topic.
func awaitStopped(ctx context.Context, cfg Config, topics []string, first int64, wait time.Duration) (map[string]map[int32]int64, error) {
	confirmed := map[string]map[int32]int64{}
	if wait <= 0 {
		return confirmed, nil
	}
	stateTopic := LinkStateTopic(cfg.Source.Name)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err := readRange(wctx, cfg.Target, stateTopic, 0, first, func(r *kgo.Record) bool {
		var ls linkState
		if json.Unmarshal(r.Value, &ls) == nil && ls.State == linkStopped {
			for _, t := range topics {
				if t == string(r.Key) {
					confirmed[t] = ls.Ends
				}
			}
		}
		return len(confirmed) < len(topics)
	})
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return confirmed, nil // not confirmed in time; the caller reports which
	}
	return confirmed, err
}

// unlink deletes gregor.mirror.link from the target topics
// (IncrementalAlterConfigs), making them writable by ordinary produce.
func unlink(ctx context.Context, adm *kadm.Client, topics []string) error {
	alter := []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: LinkConfig}}
	resps, err := adm.AlterTopicConfigs(ctx, alter, topics...)
	if err != nil {
		return fmt.Errorf("mirror: make %v writable: %w", topics, err)
	}
	for _, r := range resps {
		if r.Err != nil {
			return fmt.Errorf("mirror: make %s writable: %w (%s)", r.Name, r.Err, r.ErrMessage)
		}
	}
	return nil
}
