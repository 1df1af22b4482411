package api

import (
	"errors"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/partition"
)

// adminErrCode is errCode for the admin APIs: an unknown topic id is
// UNKNOWN_TOPIC_ID, although the controller's error also matches
// ErrUnknownTopic.
func adminErrCode(err error) int16 {
	if errors.Is(err, controller.ErrUnknownTopicID) {
		return kerr.UnknownTopicID.Code
	}
	return errCode(err)
}

// clusterAllOps is the bit set of cluster operations a client may perform
// while no authorizer is configured, as Kafka reports it: CREATE, ALTER,
// DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS and
// IDEMPOTENT_WRITE.
const clusterAllOps = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12

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

// apiError is a Kafka error code with the message sent beside it.
type apiError struct {
	code int16
	msg  string
}

func (e *apiError) message() *string {
	if e == nil || e.msg == "" {
		return nil
	}
	return strPtr(e.msg)
}

func newAPIError(code *kerr.Error, msg string) *apiError { return &apiError{code: code.Code, msg: msg} }

// fromErr turns an error from the layers below into an apiError.
func fromErr(err error) *apiError {
	if err == nil {
		return nil
	}
	return &apiError{code: adminErrCode(err), msg: err.Error()}
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
