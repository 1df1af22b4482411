package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Replication throttling (Kafka's KIP-73): two dynamic broker configs give
// the byte rates, two topic configs name the throttled replicas.
const (
	// LeaderReplicationThrottledRate bounds the bytes per second a leader
	// sends to followers of throttled replicas.
	LeaderReplicationThrottledRate = "leader.replication.throttled.rate"
	// FollowerReplicationThrottledRate bounds the bytes per second a
	// follower fetches for throttled replicas.
	FollowerReplicationThrottledRate = "follower.replication.throttled.rate"
	// LeaderReplicationThrottledReplicas is the topic config naming the
	// replicas throttled on the leader side.
	LeaderReplicationThrottledReplicas = "leader.replication.throttled.replicas"
	// FollowerReplicationThrottledReplicas is the topic config naming the
	// replicas throttled on the follower side.
	FollowerReplicationThrottledReplicas = "follower.replication.throttled.replicas"
)

// UnthrottledRate is the rate of a broker without a throttle (Kafka's
// Long.MAX_VALUE).
const UnthrottledRate = math.MaxInt64

// dynamicBrokerConfigDefs are the broker configs that can change while the
// broker runs (through IncrementalAlterConfigs or AlterConfigs on a BROKER
// resource, per broker id or cluster-wide). They exist only dynamically:
// broker.toml has no key for them. Name holds the broker-level name;
// BrokerDefault is the value when neither the broker nor the cluster-wide
// default sets one.
var dynamicBrokerConfigDefs = []TopicConfigDef{
	{
		Name: FollowerReplicationThrottledRate, Type: TypeLong,
		Doc:           "The most bytes per second this broker fetches as a follower for the replicas listed in their topic's follower.replication.throttled.replicas; replicas in sync with their leader are not held back. Measured over 11 one-second samples.",
		Validate:      longAtLeast(0),
		BrokerDefault: constant(maxLong),
	},
	{
		Name: LeaderReplicationThrottledRate, Type: TypeLong,
		Doc:           "The most bytes per second this broker sends as a leader to followers of the replicas listed in their topic's leader.replication.throttled.replicas; followers in the ISR are not held back. Measured over 11 one-second samples.",
		Validate:      longAtLeast(0),
		BrokerDefault: constant(maxLong),
	},
}

// DynamicBrokerConfigDefs lists the broker configs that can be altered at
// run time, sorted by name. The slice is a copy.
func DynamicBrokerConfigDefs() []TopicConfigDef {
	out := make([]TopicConfigDef, len(dynamicBrokerConfigDefs))
	copy(out, dynamicBrokerConfigDefs)
	return out
}

// LookupDynamicBrokerConfig finds a dynamic broker config by its Kafka name.
func LookupDynamicBrokerConfig(name string) (TopicConfigDef, bool) {
	for _, d := range dynamicBrokerConfigDefs {
		if d.Name == name {
			return d, true
		}
	}
	return TopicConfigDef{}, false
}

// ThrottledReplica is one "partition:broker" entry of a throttled replicas
// list.
type ThrottledReplica struct {
	Partition int32
	Broker    int32
}

// ThrottledReplicas is a parsed leader or follower throttled replicas list.
type ThrottledReplicas struct {
	// All is the "*" wildcard: every replica of the topic.
	All      bool
	Replicas []ThrottledReplica
}

// OnBroker returns the partitions whose replica on broker is throttled;
// all is true for the wildcard.
func (t ThrottledReplicas) OnBroker(broker int32) (partitions []int32, all bool) {
	if t.All {
		return nil, true
	}
	for _, r := range t.Replicas {
		if r.Broker == broker {
			partitions = append(partitions, r.Partition)
		}
	}
	return partitions, false
}

// ParseThrottledReplicas reads a throttled replicas list as Kafka accepts
// it: "*" (blanks around it allowed), or comma-separated
// [partition]:[broker id] pairs of decimal digits; blanks around an entry
// and empty entries are ignored.
func ParseThrottledReplicas(v string) (ThrottledReplicas, error) {
	var items []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	if len(items) == 1 && items[0] == "*" {
		return ThrottledReplicas{All: true}, nil
	}
	var out ThrottledReplicas
	for _, item := range items {
		ps, bs, ok := strings.Cut(item, ":")
		p, perr := parseReplicaID(ps)
		b, berr := parseReplicaID(bs)
		if !ok || perr != nil || berr != nil {
			return ThrottledReplicas{}, fmt.Errorf("%q is not [partition]:[broker id]; the value must be the literal '*' or a list of replicas in the form [partitionId]:[brokerId],[partitionId]:[brokerId],...", item)
		}
		out.Replicas = append(out.Replicas, ThrottledReplica{Partition: p, Broker: b})
	}
	return out, nil
}

// parseReplicaID accepts decimal digits only (no sign) that fit an int32.
func parseReplicaID(s string) (int32, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, err
	}
	return int32(n), nil
}

func validThrottledReplicas(v string) error {
	_, err := ParseThrottledReplicas(v)
	return err
}
