package api

import (
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
)

// groupOps is the bit set of group operations a client may perform while no
// authorizer is configured: READ, DELETE and DESCRIBE.
const groupOps = 1<<3 | 1<<6 | 1<<8

// offsetsTopic returns __consumer_offsets, creating it as Kafka does on the
// first FindCoordinator: compacted, with groups.offsets_topic_partitions
// partitions and a replication factor no larger than the live cluster.
func (b *Broker) offsetsTopic() (*controller.Topic, error) {
	gc := b.Config.Groups
	return b.ensureInternalTopic(internalTopic{
		name: group.OffsetsTopic, partitions: gc.OffsetsTopicPartitions,
		replicationFactor: gc.OffsetsTopicReplicationFactor,
		configFor: func(int16) map[string]string {
			return map[string]string{
				"cleanup.policy":   "compact",
				"segment.bytes":    strconv.FormatInt(gc.OffsetsTopicSegmentBytes, 10),
				"compression.type": "producer",
			}
		},
		unavailable: group.ErrCoordinatorNotAvailable,
	})
}

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

// groupCode is errCode for a group API, COORDINATOR_NOT_AVAILABLE while no
// coordinator is wired in.
func (b *Broker) groupCode(err error) int16 {
	if b.Groups == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	return errCode(err)
}
