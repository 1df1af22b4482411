package api

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
)

// Group metadata follows log.durability as committed offsets do: on fsync
// durability a group API that wrote to __consumer_offsets (an assignment, a
// member joining or leaving, a consumer group's state, a deletion) answers
// once the group's partition is on disk. A partition with nothing new to
// flush costs nothing, and concurrent answers share one fsync.

// groupFsync says whether group writes must reach the disk before an answer.
func (b *Broker) groupFsync() bool {
	return b.Groups != nil && b.Config.Log.Durability == config.DurabilityFsync
}

// syncGroups flushes the __consumer_offsets partitions of groups that this
// broker coordinates; nothing when log.durability is not fsync.
func (b *Broker) syncGroups(groups ...string) error {
	if !b.groupFsync() {
		return nil
	}
	done := map[*partition.Partition]bool{}
	for _, g := range groups {
		p := b.Groups.Partition(g)
		if p == nil || done[p] {
			continue
		}
		done[p] = true
		if err := p.Sync(); err != nil {
			b.Logger.Error("fsync of group metadata failed", "group", g, "err", err)
			return fmt.Errorf("api: fsync of group %q: %w", g, err)
		}
	}
	return nil
}

// durableGroupReply answers resp at once, or, on fsync durability, once
// the groups' partitions are on disk; failed is called to mark the answer
// when the fsync fails.
func (b *Broker) durableGroupReply(resp kmsg.Response, failed func(code int16), groups ...string) protocol.Reply {
	if !b.groupFsync() {
		return protocol.Reply{Resp: resp}
	}
	return protocol.Reply{Later: func() kmsg.Response {
		if err := b.syncGroups(groups...); err != nil {
			failed(kerr.CoordinatorNotAvailable.Code)
		}
		return resp
	}}
}
