package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bounds of the group-level streams.* configs: Kafka's defaults of
// group.streams.min/max.session.timeout.ms and
// group.streams.min/max.heartbeat.interval.ms, which Gregor does not make
// settings.
const (
	streamsMinSessionTimeoutMs    = 45000
	streamsMaxSessionTimeoutMs    = 60000
	streamsMinHeartbeatIntervalMs = 5000
	streamsMaxHeartbeatIntervalMs = 15000
	streamsInitialRebalanceDelay  = 3000
)

// GroupConfigDefs are the configs of the GROUP config resource (resource
// type 32), Kafka 4.4's GroupConfig: their defaults are the broker's
// settings and their values are checked against the broker's min/max, as
// Kafka does.
func GroupConfigDefs(c *Config) []TopicConfigDef {
	g := &c.Groups
	i64 := func(v int64) func(*Config) string { return constant(strconv.FormatInt(v, 10)) }
	between := func(name string, lo, hi int64, loName, hiName string) func(string) error {
		return func(v string) error {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return fmt.Errorf("%q is not an int", v)
			}
			if n < lo {
				return fmt.Errorf("%s must be greater than or equal to %s (%d)", name, loName, lo)
			}
			if n > hi {
				return fmt.Errorf("%s must be less than or equal to %s (%d)", name, hiName, hi)
			}
			return nil
		}
	}
	intDef := func(name, doc string, def, lo, hi int64, synonym, loName, hiName string) TopicConfigDef {
		return TopicConfigDef{Name: name, Type: TypeInt, Doc: doc, BrokerDefault: i64(def), BrokerSynonym: synonym,
			Validate: between(name, lo, hi, loName, hiName)}
	}
	return []TopicConfigDef{
		intDef("consumer.session.timeout.ms", "The timeout to detect client failures when using the consumer group protocol.",
			g.GroupConsumerSessionTimeoutMs, g.GroupConsumerMinSessionTimeoutMs, g.GroupConsumerMaxSessionTimeoutMs,
			"group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
		intDef("consumer.heartbeat.interval.ms", "The heartbeat interval given to the members of a consumer group.",
			g.GroupConsumerHeartbeatIntervalMs, g.GroupConsumerMinHeartbeatIntervalMs, g.GroupConsumerMaxHeartbeatIntervalMs,
			"group.consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
		intDef("share.session.timeout.ms", "The timeout to detect client failures when using the share group protocol.",
			g.GroupShareSessionTimeoutMs, g.GroupShareMinSessionTimeoutMs, g.GroupShareMaxSessionTimeoutMs,
			"group.share.session.timeout.ms", "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
		intDef("share.heartbeat.interval.ms", "The heartbeat interval given to the members of a share group.",
			g.GroupShareHeartbeatIntervalMs, g.GroupShareMinHeartbeatIntervalMs, g.GroupShareMaxHeartbeatIntervalMs,
			"group.share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
		intDef("share.record.lock.duration.ms", "The record acquisition lock duration in milliseconds for share groups.",
			g.GroupShareRecordLockDurationMs, g.GroupShareMinRecordLockDurationMs, g.GroupShareMaxRecordLockDurationMs,
			"group.share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"),
		intDef("share.delivery.count.limit", "The maximum number of delivery attempts for a record delivered to a share group.",
			int64(g.GroupShareDeliveryCountLimit), int64(g.GroupShareMinDeliveryCountLimit), int64(g.GroupShareMaxDeliveryCountLimit),
			"group.share.delivery.count.limit", "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"),
		intDef("share.partition.max.record.locks", "Share-group record lock limit per share-partition.",
			int64(g.GroupSharePartitionMaxRecordLocks), int64(g.GroupShareMinPartitionMaxRecordLocks), int64(g.GroupShareMaxPartitionMaxRecordLocks),
			"group.share.partition.max.record.locks", "group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks"),
		{Name: "share.auto.offset.reset", Type: TypeString, BrokerDefault: constant("latest"), Validate: validShareAutoOffsetReset,
			Doc: "The strategy to initialize the share-partition start offset: earliest, latest, or by_duration:<ISO8601 duration>."},
		{Name: "share.isolation.level", Type: TypeString, BrokerDefault: constant("read_uncommitted"),
			Validate: oneOf("read_committed", "read_uncommitted"),
			Doc:      "Controls how to read records written transactionally: read_committed delivers only committed transactional records."},
		{Name: "share.renew.acknowledge.enable", Type: TypeBoolean, BrokerDefault: constant("true"), Validate: oneOf("true", "false"),
			Doc: "Whether the renew acknowledge type is enabled for the share group."},
		intDef("streams.session.timeout.ms", "The timeout to detect client failures when using the streams group protocol.",
			g.GroupStreamsSessionTimeoutMs, min(g.GroupStreamsSessionTimeoutMs, streamsMinSessionTimeoutMs),
			max(g.GroupStreamsSessionTimeoutMs, streamsMaxSessionTimeoutMs),
			"group.streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
		intDef("streams.heartbeat.interval.ms", "The heartbeat interval given to the members of a streams group.",
			g.GroupStreamsHeartbeatIntervalMs, min(g.GroupStreamsHeartbeatIntervalMs, streamsMinHeartbeatIntervalMs),
			max(g.GroupStreamsHeartbeatIntervalMs, streamsMaxHeartbeatIntervalMs),
			"group.streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"),
		intDef("streams.num.standby.replicas", "The number of standby replicas for each task.",
			int64(g.GroupStreamsNumStandbyReplicas), 0, int64(g.GroupStreamsMaxStandbyReplicas),
			"group.streams.num.standby.replicas", "0", "group.streams.max.standby.replicas"),
		intDef("streams.initial.rebalance.delay.ms", "The delay of the first rebalance of a new streams group.",
			streamsInitialRebalanceDelay, 0, 1<<31-1, "group.streams.initial.rebalance.delay.ms", "0", "Integer.MAX_VALUE"),
	}
}

// LookupGroupConfig finds a group config by name.
func LookupGroupConfig(c *Config, name string) (TopicConfigDef, bool) {
	for _, d := range GroupConfigDefs(c) {
		if d.Name == name {
			return d, true
		}
	}
	return TopicConfigDef{}, false
}

// validShareAutoOffsetReset accepts Kafka's ShareGroupAutoOffsetResetStrategy
// values: earliest, latest, by_duration:<non-negative ISO8601 duration>.
func validShareAutoOffsetReset(v string) error {
	switch strings.ToLower(v) {
	case "earliest", "latest":
		return nil
	}
	if d, ok := strings.CutPrefix(strings.ToLower(v), "by_duration:"); ok {
		if _, err := ParseISODuration(d); err != nil {
			return fmt.Errorf("%q: %w", v, err)
		}
		return nil
	}
	return fmt.Errorf("%q is not earliest, latest or by_duration:<duration>", v)
}

// ParseISODuration parses the PnDTnHnMn.nS durations of Java's
// Duration.parse; negative durations are refused.
func ParseISODuration(s string) (time.Duration, error) {
	u := strings.ToUpper(s)
	if !strings.HasPrefix(u, "P") || len(u) < 3 {
		return 0, fmt.Errorf("%q is not an ISO8601 duration", s)
	}
	u = u[1:]
	var d time.Duration
	inTime := false
	for len(u) > 0 {
		if u[0] == 'T' {
			inTime = true
			u = u[1:]
			continue
		}
		i := 0
		for i < len(u) && (u[i] >= '0' && u[i] <= '9' || u[i] == '.') {
			i++
		}
		if i == 0 || i == len(u) {
			return 0, fmt.Errorf("%q is not an ISO8601 duration", s)
		}
		n, err := strconv.ParseFloat(u[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not an ISO8601 duration", s)
		}
		unit := u[i]
		u = u[i+1:]
		switch {
		case unit == 'D' && !inTime:
			d += time.Duration(n * float64(24*time.Hour))
		case unit == 'H' && inTime:
			d += time.Duration(n * float64(time.Hour))
		case unit == 'M' && inTime:
			d += time.Duration(n * float64(time.Minute))
		case unit == 'S' && inTime:
			d += time.Duration(n * float64(time.Second))
		default:
			return 0, fmt.Errorf("%q is not an ISO8601 duration", s)
		}
	}
	return d, nil
}
