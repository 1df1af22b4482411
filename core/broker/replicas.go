package broker

import (
	"net"
	"strconv"
	"strings"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/replication"
)

// apply makes the hosted partitions match a metadata image: it opens the
// logs of partitions assigned to this broker, applies leadership, topic
// configs and the replication throttle, deletes the partitions of deleted
// topics and hands the coordinators the partitions led here. It is
// idempotent; only the applier calls it.
func (b *Broker) apply(im *controller.Image) error {
	b.applyReplicationThrottle(im)
	var firstErr error
	var follows []replication.Follow
	want := map[partition.TopicPartition]bool{}
	for _, t := range im.Topics {
		cfg := b.TopicPartitionConfig(im, t.Name)
		for _, pm := range t.Partitions {
			if !contains(pm.Replicas, b.Config.NodeID) {
				continue
			}
			tp := partition.TopicPartition{Topic: t.Name, Partition: pm.Index}
			want[tp] = true
			p, ok := b.Partitions.Get(t.Name, pm.Index)
			if ok && p.TopicID != t.ID {
				// The topic was deleted and created again under the same name.
				b.dropPartition(p)
				ok = false
			}
			if !ok {
				l, err := b.Logs.Create(t.Name, pm.Index, cfg.Log)
				if err != nil {
					b.Logger.Error("cannot open partition log", "topic", t.Name, "partition", pm.Index, "err", err)
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				p, err = partition.New(l, t.ID, cfg, partition.Options{Now: b.Now, Logger: b.Logger,
					NodeID: b.Config.NodeID, Replicated: true})
				if err != nil {
					b.Logger.Error("cannot open partition", "topic", t.Name, "partition", pm.Index, "err", err)
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				b.Partitions.Put(p)
			} else {
				p.SetConfig(cfg)
			}
			p.SetLeadershipEpochs(pm.Leader, pm.LeaderEpoch, pm.PartitionEpoch, pm.Replicas, pm.ISR)
			if pm.Leader >= 0 && pm.Leader != b.Config.NodeID {
				follows = append(follows, replication.Follow{Partition: p, Leader: pm.Leader,
					LeaderAddr: b.ReplicaAddr(im, pm.Leader), LeaderEpoch: pm.LeaderEpoch})
			}
		}
	}
	if b.Followers != nil {
		// Partitions not listed (led here, leaderless or gone) stop being
		// fetched; a deposed leader starts fetching and truncates its
		// unreplicated tail by leader epochs.
		b.Followers.Apply(follows)
	}
	for _, p := range b.Partitions.All() {
		if !want[partition.TopicPartition{Topic: p.Topic, Partition: p.Index}] {
			b.dropPartition(p)
		}
	}
	if b.Groups != nil {
		b.assignGroupPartitions(im)
	}
	if b.Txns != nil {
		b.assignTxnPartitions(im)
	}
	return firstErr
}

func (b *Broker) dropPartition(p *partition.Partition) {
	b.Partitions.Remove(p.Topic, p.Index)
	p.Close()
	if err := b.Logs.Delete(p.Topic, p.Index); err != nil {
		b.Logger.Error("cannot delete partition log", "topic", p.Topic, "partition", p.Index, "err", err)
	}
}

// ReplicaAddr is a broker's address for replica fetches: its endpoint on
// the inter-broker listener (cluster.inter_broker_listener, the primary
// listener by default), or "" when the image does not know it. A broker
// registered without endpoints is reached at its primary address.
func (b *Broker) ReplicaAddr(im *controller.Image, id int32) string {
	br, ok := im.Broker(id)
	if !ok {
		return ""
	}
	host, port := br.Host, br.Port
	if len(br.Endpoints) > 0 {
		l, ok := b.Config.InterBrokerListener()
		if !ok {
			return ""
		}
		host, port = "", 0
		for _, e := range br.Endpoints {
			if e.Listener == l.Name {
				host, port = e.Host, e.Port
				break
			}
		}
		if host == "" {
			b.Logger.Warn("a leader has no endpoint on the inter-broker listener; its partitions are not fetched",
				"broker", id, "listener", l.Name)
		}
	}
	if host == "" || port <= 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// PartitionConfig turns an effective topic configuration into the rules a
// partition and its log enforce. Values were validated when they were set;
// an unparsable one falls back to the broker default.
func PartitionConfig(bc config.Config, m map[string]string) partition.Config {
	i64 := func(k string, def int64) int64 {
		if v, err := strconv.ParseInt(strings.TrimSpace(m[k]), 10, 64); err == nil {
			return v
		}
		return def
	}
	lc := log.DefaultConfig()
	lc.SegmentBytes = i64("segment.bytes", bc.Log.SegmentBytes)
	lc.SegmentMs = i64("segment.ms", bc.Log.SegmentMs)
	lc.IndexIntervalBytes = int32(i64("index.interval.bytes", int64(bc.Log.IndexIntervalBytes)))
	lc.RetentionMs = i64("retention.ms", bc.Log.RetentionMs)
	lc.RetentionBytes = i64("retention.bytes", bc.Log.RetentionBytes)
	lc.MaxIndexBytes = int32(i64("segment.index.bytes", int64(lc.MaxIndexBytes)))
	policy, ok := m["cleanup.policy"]
	if !ok {
		policy = bc.Log.CleanupPolicy
	}
	lc.Compact, lc.Delete = false, false
	for _, p := range strings.Split(policy, ",") {
		switch strings.TrimSpace(p) {
		case "compact":
			lc.Compact = true
		case "delete":
			lc.Delete = true
		}
	}
	lc.DeleteRetentionMs = i64("delete.retention.ms", lc.DeleteRetentionMs)
	if r, err := strconv.ParseFloat(strings.TrimSpace(m["min.cleanable.dirty.ratio"]), 64); err == nil && r >= 0 && r <= 1 {
		lc.MinCleanableDirtyRatio = r
	}
	lc.MinCompactionLagMs = i64("min.compaction.lag.ms", lc.MinCompactionLagMs)
	lc.MaxCompactionLagMs = i64("max.compaction.lag.ms", lc.MaxCompactionLagMs)
	flushMessages := lc.FlushMessages
	if bc.Log.FlushIntervalMessages > 0 {
		flushMessages = bc.Log.FlushIntervalMessages
	}
	lc.FlushMessages = max(i64("flush.messages", flushMessages), 1)
	flushMs := lc.FlushMs
	if bc.Log.FlushIntervalMs > 0 {
		flushMs = bc.Log.FlushIntervalMs
	}
	lc.FlushMs = max(i64("flush.ms", flushMs), 0)
	const unbounded = int64(1<<63 - 1)
	before := i64("message.timestamp.before.max.ms", unbounded)
	after := i64("message.timestamp.after.max.ms", unbounded)
	if before == unbounded {
		before = -1
	}
	if after == unbounded {
		after = -1
	}
	return partition.Config{
		Log:                  lc,
		MaxMessageBytes:      int32(i64("max.message.bytes", int64(bc.Log.MaxMessageBytes))),
		LogAppendTime:        m["message.timestamp.type"] == "LogAppendTime",
		TimestampBeforeMaxMs: before,
		TimestampAfterMaxMs:  after,
		MinInsyncReplicas:    int32(i64("min.insync.replicas", int64(bc.Log.MinInsyncReplicas))),
	}
}
