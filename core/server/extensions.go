package server

import (
	"context"
	"time"

	"github.com/gregorbroker/gregor/core/api"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// retentionCallTimeout bounds one retention policy call.
const retentionCallTimeout = 30 * time.Second

// wireExtensions hands the broker the partitioners and retention policies
// the caller opened for the [extensions] of broker.toml.
func (s *Server) wireExtensions(b *api.Broker) error {
	set, err := extension.NewSetWith(&s.cfg, s.opts.Partitioners, s.opts.RetentionPolicies, s.opts.Interceptors, s.logger.With("component", "extensions"))
	if err != nil {
		return err
	}
	b.Extensions = set
	return nil
}

// retain runs one retention round over a partition: the topic's retention
// policy when it names one (with its fallback when the policy fails), else
// the built-in time and size retention. Retention never moves the log start
// past the high watermark.
func (s *Server) retain(b *api.Broker, p *partition.Partition) {
	l := p.Log()
	hw := p.Offsets().HighWatermark
	builtin := func() {
		n, err := l.ApplyRetentionBelow(hw)
		if err != nil {
			s.logger.Error("retention failed", "topic", p.Topic, "partition", p.Index, "err", err)
		} else if n > 0 {
			s.logger.Info("retention deleted segments", "topic", p.Topic, "partition", p.Index, "segments", n)
		}
	}
	if b.Extensions == nil {
		builtin()
		return
	}
	configs := b.Controller.Image().TopicConfig(p.Topic)
	name, policy, fallback, ok, err := b.Extensions.TopicRetention(configs)
	if err != nil {
		// A topic naming a policy broker.toml does not declare keeps its
		// data until the name is fixed: deleting by another rule could
		// remove what the named policy meant to keep.
		s.logger.Error("retention skipped", "topic", p.Topic, "partition", p.Index, "err", err)
		return
	}
	if !ok {
		builtin()
		return
	}
	if !l.Config().Delete {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), retentionCallTimeout)
	defer cancel()
	n, err := extension.ApplyPolicy(ctx, policy, l, hw, groupOffsets(b.Groups), s.now().UnixMilli())
	switch {
	case err != nil && fallback == config.FallbackBuiltin:
		s.logger.Warn("retention policy failed; applying retention.ms and retention.bytes", "policy", name,
			"topic", p.Topic, "partition", p.Index, "err", err)
		builtin()
	case err != nil:
		s.logger.Error("retention policy failed; nothing deleted", "policy", name, "topic", p.Topic, "partition", p.Index, "err", err)
	case n > 0:
		s.logger.Info("retention policy deleted segments", "policy", name, "topic", p.Topic, "partition", p.Index, "segments", n)
	}
}

// groupOffsets reads committed offsets from the group coordinator. With no
// coordinator every group has read nothing.
func groupOffsets(c *group.Coordinator) extension.GroupOffsets {
	return func(groups []string, topic string, partition int32) ([]retention.GroupOffset, error) {
		if c == nil {
			out := make([]retention.GroupOffset, len(groups))
			for i, g := range groups {
				out[i] = retention.GroupOffset{Group: g, Offset: -1}
			}
			return out, nil
		}
		all := groups == nil
		if all {
			listed, err := c.ListGroups(nil, nil)
			if err != nil {
				return nil, err
			}
			for _, l := range listed {
				groups = append(groups, l.Group)
			}
		}
		tp := []group.TopicPartition{{Topic: topic, Partition: partition}}
		out := make([]retention.GroupOffset, 0, len(groups))
		for _, g := range groups {
			fetched, err := c.FetchOffsets(group.FetchRequest{Group: g, Partitions: tp})
			if err != nil {
				return nil, err
			}
			off := int64(-1)
			if len(fetched) == 1 {
				off = fetched[0].Offset.Offset
			}
			if all && off < 0 {
				continue
			}
			out = append(out, retention.GroupOffset{Group: g, Offset: off})
		}
		return out, nil
	}
}
