package group

import (
	"strconv"
	"time"
)

// Kafka's group-level configs of streams groups (the GROUP config
// resource): set on a group they override the broker's settings for it.
// The broker checked them against its bounds when they were set.
const (
	StreamsSessionTimeoutConfig     = "streams.session.timeout.ms"
	StreamsHeartbeatIntervalConfig  = "streams.heartbeat.interval.ms"
	StreamsNumStandbyReplicasConfig = "streams.num.standby.replicas"
)

// streamsSettings are the settings a streams group runs with.
type streamsSettings struct {
	sessionTimeout    time.Duration
	heartbeatInterval time.Duration
	standbyReplicas   int
}

// streamsSettings returns a streams group's settings: its group configs
// over the coordinator's Config. A value that does not parse is ignored.
func (c *Coordinator) streamsSettings(groupID string) streamsSettings {
	st := streamsSettings{sessionTimeout: c.cfg.StreamsSessionTimeout, heartbeatInterval: c.cfg.StreamsHeartbeatInterval,
		standbyReplicas: c.cfg.StreamsNumStandbyReplicas}
	cfg := c.groupConfigs(groupID)
	if len(cfg) == 0 {
		return st
	}
	positive := func(name string) (int64, bool) {
		n, err := strconv.ParseInt(cfg[name], 10, 32)
		return n, err == nil && n > 0
	}
	if n, ok := positive(StreamsSessionTimeoutConfig); ok {
		st.sessionTimeout = time.Duration(n) * time.Millisecond
	}
	if n, ok := positive(StreamsHeartbeatIntervalConfig); ok {
		st.heartbeatInterval = time.Duration(n) * time.Millisecond
	}
	if v, ok := cfg[StreamsNumStandbyReplicasConfig]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			st.standbyReplicas = n
		}
	}
	return st
}
