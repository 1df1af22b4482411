package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/share"
	"github.com/gregorbroker/gregor/core/share/coordinator"
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
	{share.ErrInvalidRecordState, kerr.InvalidRecordState},
	{share.ErrInvalidRequest, kerr.InvalidRequest},
	{share.ErrUnknownMemberID, kerr.UnknownMemberID},
	{share.ErrFencedMemberEpoch, kerr.FencedMemberEpoch},
	{share.ErrGroupMaxSizeReached, kerr.GroupMaxSizeReached},
	{share.ErrGroupIDNotFound, kerr.GroupIDNotFound},
	{share.ErrInconsistentGroupProtocol, kerr.InconsistentGroupProtocol},
	{share.ErrNonEmptyGroup, kerr.NonEmptyGroup},
	{share.ErrShareSessionNotFound, kerr.ShareSessionNotFound},
	{share.ErrInvalidShareSessionEpoch, kerr.InvalidShareSessionEpoch},
	{share.ErrShareSessionLimitReached, kerr.ShareSessionLimitReached},
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

// shareCoordinatorErrs are the errors of share-partitions and the share
// coordinator; they are matched before errMap, whose partition errors they
// may wrap.
var shareCoordinatorErrs = []struct {
	err  error
	code *kerr.Error
}{
	// A failed write and an unreadable state wrap the cause: first.
	{coordinator.ErrStateWrite, kerr.KafkaStorageError},
	{coordinator.ErrNotLeader, kerr.NotLeaderForPartition},
	{coordinator.ErrUnknownTopicID, kerr.UnknownTopicID},
	{coordinator.ErrUnknownTopicOrPartition, kerr.UnknownTopicOrPartition},
	{coordinator.ErrNotCoordinator, kerr.NotCoordinator},
	{coordinator.ErrCoordinatorLoadInProgress, kerr.CoordinatorLoadInProgress},
	{coordinator.ErrCoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
	{coordinator.ErrFencedLeaderEpoch, kerr.FencedLeaderEpoch},
	{coordinator.ErrFencedStateEpoch, kerr.FencedStateEpoch},
	{coordinator.ErrInvalidRequest, kerr.InvalidRequest},
}

// shareErrCode chooses the Kafka error code for an error of share groups.
func shareErrCode(err error) int16 {
	for _, m := range shareCoordinatorErrs {
		if errors.Is(err, m.err) {
			return m.code.Code
		}
	}
	return errCode(err)
}
