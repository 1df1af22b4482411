package broker

import (
	"strconv"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/replication"
)

// applyReplicationThrottle sets this broker's replication quotas from the
// metadata image, as Kafka's brokers apply their dynamic configs: each rate
// is the value set on this broker id, else the cluster-wide value, else
// unthrottled; the throttled replicas are this broker's entries in every
// topic's leader.replication.throttled.replicas and
// follower.replication.throttled.replicas ("*" throttles all of the
// topic's replicas).
func (b *Broker) applyReplicationThrottle(im *controller.Image) {
	if b.Throttle == nil {
		return
	}
	own, cluster := im.BrokerConfig(strconv.Itoa(int(b.Config.NodeID))), im.BrokerConfig("")
	rate := func(name string) int64 {
		v, ok := own[name]
		if !ok {
			v, ok = cluster[name]
		}
		if !ok {
			return replication.Unthrottled
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			// Values were validated when set; a bad one cannot stop
			// replication.
			b.Logger.Warn("ignoring an invalid replication throttle rate", "config", name, "value", v)
			return replication.Unthrottled
		}
		return n
	}
	b.Throttle.Leader.SetLimit(rate(config.LeaderReplicationThrottledRate))
	b.Throttle.Follower.SetLimit(rate(config.FollowerReplicationThrottledRate))

	leader := map[string]replication.ThrottledPartitions{}
	follower := map[string]replication.ThrottledPartitions{}
	for res, m := range im.Configs {
		if res.Type != controller.ResourceTopic {
			continue
		}
		for name, into := range map[string]map[string]replication.ThrottledPartitions{
			config.LeaderReplicationThrottledReplicas:   leader,
			config.FollowerReplicationThrottledReplicas: follower,
		} {
			v, ok := m[name]
			if !ok {
				continue
			}
			list, err := config.ParseThrottledReplicas(v)
			if err != nil {
				b.Logger.Warn("ignoring an invalid throttled replicas list", "topic", res.Name, "config", name, "err", err)
				continue
			}
			if parts, all := list.OnBroker(b.Config.NodeID); all || len(parts) > 0 {
				into[res.Name] = replication.ThrottledPartitions{All: all, Partitions: parts}
			}
		}
	}
	b.Throttle.Leader.SetThrottled(leader)
	b.Throttle.Follower.SetThrottled(follower)
}
