package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/partition"
)

// errCode chooses the Kafka error code for an error from the layers below.
func errCode(err error) int16 {
	if err == nil {
		return 0
	}
	for _, m := range errMap {
		if errors.Is(err, m.err) {
			return m.code.Code
		}
	}
	return kerr.UnknownServerError.Code
}

var errMap = []struct {
	err  error
	code *kerr.Error
}{
	{partition.ErrCorruptMessage, kerr.CorruptMessage},
	{partition.ErrMessageTooLarge, kerr.MessageTooLarge},
	{partition.ErrInvalidRecord, kerr.InvalidRecord},
	{partition.ErrInvalidTimestamp, kerr.InvalidTimestamp},
	{partition.ErrUnsupportedForMagic, kerr.UnsupportedForMessageFormat},
	{partition.ErrOutOfOrderSequence, kerr.OutOfOrderSequenceNumber},
	{partition.ErrInvalidProducerEpoch, kerr.InvalidProducerEpoch},
	{partition.ErrNotLeader, kerr.NotLeaderForPartition},
	{partition.ErrFencedLeaderEpoch, kerr.FencedLeaderEpoch},
	{partition.ErrNotEnoughReplicasAfterAppend, kerr.NotEnoughReplicasAfterAppend},
	{partition.ErrReplicationTimeout, kerr.RequestTimedOut},
	{partition.ErrUnknownLeaderEpoch, kerr.UnknownLeaderEpoch},
	{partition.ErrOffsetOutOfRange, kerr.OffsetOutOfRange},
	{partition.ErrNotEnoughReplicas, kerr.NotEnoughReplicas},
	{partition.ErrStorage, kerr.KafkaStorageError},
	{partition.ErrClosed, kerr.NotLeaderForPartition},
	{controller.ErrTopicExists, kerr.TopicAlreadyExists},
	{controller.ErrUnknownTopic, kerr.UnknownTopicOrPartition},
	{controller.ErrInvalidTopic, kerr.InvalidTopicException},
	{controller.ErrInvalidPartitions, kerr.InvalidPartitions},
	{controller.ErrInvalidReplicationFactor, kerr.InvalidReplicationFactor},
	{controller.ErrInvalidConfig, kerr.InvalidConfig},
	{controller.ErrNotController, kerr.NotController},
	{controller.ErrInvalidRequest, kerr.InvalidRequest},
	{context.DeadlineExceeded, kerr.RequestTimedOut},
	{context.Canceled, kerr.RequestTimedOut},
}

// errMessage is the text sent in responses that carry one.
func errMessage(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}
