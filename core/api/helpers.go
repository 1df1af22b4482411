package api

import (
	"encoding/base64"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/telemetry"
)

// Helpers the handlers share; what they ask of the broker is in
// core/broker.

// groupOps is the bit set of group operations a client may perform while no
// authorizer is configured: READ, DELETE and DESCRIBE.
const groupOps = 1<<3 | 1<<6 | 1<<8

// clusterAllOps is the bit set of cluster operations a client may perform
// while no authorizer is configured, as Kafka reports it: CREATE, ALTER,
// DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS and
// IDEMPOTENT_WRITE.
const clusterAllOps = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12

// clientHost is how Kafka shows a client's address: "/" and the IP.
func clientHost(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	if ta, ok := addr.(*net.TCPAddr); ok {
		return "/" + ta.IP.String()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "/" + addr.String()
	}
	return "/" + host
}

func millis(v int32) time.Duration { return time.Duration(v) * time.Millisecond }

// durableGroupReply answers resp at once, or, on fsync durability, once
// the groups' partitions are on disk (broker.Broker.SyncGroups); failed is
// called to mark the answer when the fsync fails.
func (b *Broker) durableGroupReply(resp kmsg.Response, failed func(code int16), groups ...string) protocol.Reply {
	if !b.GroupFsync() {
		return protocol.Reply{Resp: resp}
	}
	return protocol.Reply{Later: func() kmsg.Response {
		if err := b.SyncGroups(groups...); err != nil {
			failed(kerr.CoordinatorNotAvailable.Code)
		}
		return resp
	}}
}

// localPartition finds a partition hosted here, or gives the Kafka error code
// saying why it cannot: NOT_LEADER_OR_FOLLOWER when the cluster knows the
// partition but this broker holds no replica of it, otherwise
// UNKNOWN_TOPIC_OR_PARTITION.
func (b *Broker) localPartition(topic string, index int32) (*partition.Partition, int16) {
	if p, ok := b.Partition(topic, index); ok {
		return p, 0
	}
	if t, ok := b.Controller.Image().Topic(topic); ok && index >= 0 && int(index) < len(t.Partitions) {
		return nil, kerr.NotLeaderForPartition.Code
	}
	return nil, kerr.UnknownTopicOrPartition.Code
}

// leaderPartition is localPartition for operations only the leader may
// perform.
func (b *Broker) leaderPartition(topic string, index int32) (*partition.Partition, int16) {
	p, code := b.localPartition(topic, index)
	if code != 0 {
		return nil, code
	}
	if leader, _ := p.Leadership(); leader != b.Config.NodeID {
		return nil, kerr.NotLeaderForPartition.Code
	}
	return p, 0
}

// checkNodeID applies Kafka's rule for a broker resource named by id: it must
// be an integer and this broker's id. what names the id in the message
// ("Node id" or "Broker id", as Kafka's messages do).
func (b *Broker) checkNodeID(name, what string) *apiError {
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return newAPIError(kerr.InvalidRequest, what+" must be an integer, but it is: "+name)
	}
	if int32(id) != b.Config.NodeID {
		return newAPIError(kerr.InvalidRequest,
			"Unexpected broker id, expected "+strconv.Itoa(int(b.Config.NodeID))+", but received "+name)
	}
	return nil
}

// defaultConfig is what an unset broker.toml key means; DescribeConfigs
// reports settings equal to it as DEFAULT_CONFIG.
var defaultConfig = config.Default()

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// kafkaUUID is Kafka's text form of a Uuid (URL-safe base64, unpadded),
// as client instance ids are matched and shown.
func kafkaUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// telemetryPlan is what the client of r with this instance id is asked to
// push under the client-metrics subscriptions in the current image.
func (b *Broker) telemetryPlan(r *protocol.Request, instance [16]byte) telemetry.Plan {
	subs := b.TelemetrySubscriptions(b.Controller.Image())
	c := telemetry.Client{InstanceID: kafkaUUID(instance), ClientID: r.ClientID}
	if r.Conn != nil {
		c.SoftwareName, c.SoftwareVersion = r.Conn.ClientSoftware()
		if r.Conn.Remote != nil {
			if host, port, err := net.SplitHostPort(r.Conn.Remote.String()); err == nil {
				c.SourceAddress, c.SourcePort = host, port
			}
		}
	}
	return telemetry.Select(subs, c)
}

// telemetryPrincipal is the principal label of a client's series.
func telemetryPrincipal(r *protocol.Request) string {
	if r.Conn != nil {
		if p := r.Conn.Principal(); p != "" {
			return p
		}
	}
	return "User:ANONYMOUS"
}
