package server

import (
	"context"

	"github.com/gregorbroker/gregor/core/api"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// wireExtensions hands the broker the extensions the caller opened for the
// [extensions] of broker.toml, each wrapped by core/extension with its
// fallback, failure policy, time limit and statistics.
func (s *Server) wireExtensions(b *api.Broker) error {
	set, err := extension.New(&s.cfg, extension.Opened{
		Partitioners:   s.opts.Partitioners,
		Retention:      s.opts.RetentionPolicies,
		Interceptors:   s.opts.Interceptors,
		Authorizers:    s.opts.Authorizers,
		Authenticators: s.opts.Authenticators,
		Now:            s.now,
	}, s.logger.With("component", "extensions"))
	if err != nil {
		return err
	}
	b.Extensions = set
	return nil
}

// retain runs one retention round over a partition (core/extension picks
// the topic's policy and applies its fallback) and logs what it did.
func (s *Server) retain(b *api.Broker, p *partition.Partition) {
	configs := b.Controller.Image().TopicConfig(p.Topic)
	r, err := b.Extensions.Retain(context.Background(), configs, p.Log(), p.Offsets().HighWatermark, groupOffsets(b.Groups), s.now().UnixMilli())
	switch {
	case err != nil:
		s.logger.Error("retention failed", "policy", r.Policy, "topic", p.Topic, "partition", p.Index, "err", err)
	case r.Segments > 0:
		s.logger.Info("retention deleted segments", "policy", r.Policy, "fallback", r.Fallback, "topic", p.Topic, "partition", p.Index, "segments", r.Segments)
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
