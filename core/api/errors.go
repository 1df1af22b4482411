package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/share"
	"github.com/gregorbroker/gregor/core/share/coordinator"
	"github.com/gregorbroker/gregor/core/txn"
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

// errMap is every mapping, in one literal: errCode takes the first entry an
// error matches, so an error wrapping two sentinels gets the code of the one
// listed first (errors_test.go pins the codes).
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

	// The cluster APIs (elections, reassignments).
	{controller.ErrElectionNotNeeded, kerr.ElectionNotNeeded},
	{controller.ErrPreferredLeaderNotAvailable, kerr.PreferredLeaderNotAvailable},
	{controller.ErrEligibleLeadersNotAvailable, kerr.EligibleLeadersNotAvailable},
	{controller.ErrNoReassignmentInProgress, kerr.NoReassignmentInProgress},
	{controller.ErrStaleBrokerEpoch, kerr.StaleBrokerEpoch},
	{controller.ErrBrokerNotRegistered, kerr.BrokerIDNotRegistered},
	{controller.ErrFencedLeaderEpoch, kerr.FencedLeaderEpoch},
	{controller.ErrInvalidUpdateVersion, kerr.InvalidUpdateVersion},
	{controller.ErrIneligibleReplica, kerr.IneligibleReplica},
	{controller.ErrInvalidReplicaAssignment, kerr.InvalidReplicaAssignment},
	{controller.ErrPolicyViolation, kerr.PolicyViolation},

	// The group coordinator.
	{group.ErrInvalidRegularExpression, kerr.InvalidRegularExpression},
	{group.ErrStreamsInvalidTopology, kerr.StreamsInvalidTopology},
	{group.ErrStreamsInvalidTopologyEpoch, kerr.StreamsInvalidTopologyEpoch},
	{group.ErrNotCoordinator, kerr.NotCoordinator},
	{group.ErrCoordinatorLoadInProgress, kerr.CoordinatorLoadInProgress},
	{group.ErrCoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
	{group.ErrInvalidGroupID, kerr.InvalidGroupID},
	{group.ErrUnknownMemberID, kerr.UnknownMemberID},
	{group.ErrIllegalGeneration, kerr.IllegalGeneration},
	{group.ErrRebalanceInProgress, kerr.RebalanceInProgress},
	{group.ErrMemberIDRequired, kerr.MemberIDRequired},
	{group.ErrInconsistentGroupProtocol, kerr.InconsistentGroupProtocol},
	{group.ErrInvalidSessionTimeout, kerr.InvalidSessionTimeout},
	{group.ErrGroupMaxSizeReached, kerr.GroupMaxSizeReached},
	{group.ErrFencedInstanceID, kerr.FencedInstanceID},
	{group.ErrGroupIDNotFound, kerr.GroupIDNotFound},
	{group.ErrNonEmptyGroup, kerr.NonEmptyGroup},
	{group.ErrOffsetMetadataTooLarge, kerr.OffsetMetadataTooLarge},
	{group.ErrGroupSubscribedToTopic, kerr.GroupSubscribedToTopic},
	{group.ErrFencedMemberEpoch, kerr.FencedMemberEpoch},
	{group.ErrStaleMemberEpoch, kerr.StaleMemberEpoch},
	{group.ErrUnreleasedInstanceID, kerr.UnreleasedInstanceID},
	{group.ErrUnsupportedAssignor, kerr.UnsupportedAssignor},
	{group.ErrInvalidRequest, kerr.InvalidRequest},
	{group.ErrUnknownTopicOrPartition, kerr.UnknownTopicOrPartition},
	{group.ErrInvalidCommitOffsetSize, kerr.InvalidCommitOffsetSize},
	// Kafka answers a failed __consumer_offsets append with
	// COORDINATOR_NOT_AVAILABLE: the client finds the coordinator again.
	{group.ErrStorage, kerr.CoordinatorNotAvailable},

	// Share groups and share sessions.
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

	// The transaction coordinator and the partitions' transactional checks.
	// errTransactionAbortable comes before txn.ErrNotInTransaction, which
	// it wraps.
	{txn.ErrTransactionAbortable, kerr.TransactionAbortable},
	{txn.ErrNotCoordinator, kerr.NotCoordinator},
	{txn.ErrCoordinatorLoadInProgress, kerr.CoordinatorLoadInProgress},
	{txn.ErrCoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
	{txn.ErrInvalidProducerIDMapping, kerr.InvalidProducerIDMapping},
	{txn.ErrProducerFenced, kerr.ProducerFenced},
	{txn.ErrConcurrentTransactions, kerr.ConcurrentTransactions},
	{txn.ErrInvalidTxnState, kerr.InvalidTxnState},
	{txn.ErrNotInTransaction, kerr.InvalidTxnState},
	{txn.ErrInvalidTimeout, kerr.InvalidTransactionTimeout},
	{txn.ErrInvalidRequest, kerr.InvalidRequest},
	{txn.ErrTransactionalIDNotFound, kerr.TransactionalIDNotFound},
	// As for groups: a failed state append sends the client to find the
	// coordinator again.
	{txn.ErrStorage, kerr.CoordinatorNotAvailable},
	{group.ErrProducerFenced, kerr.ProducerFenced},
	{partition.ErrInvalidTxnState, kerr.InvalidTxnState},
	{partition.ErrCoordinatorFenced, kerr.TransactionCoordinatorFenced},
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

// groupCode is errCode for a group API, COORDINATOR_NOT_AVAILABLE while no
// coordinator is wired in.
func (b *Broker) groupCode(err error) int16 {
	if b.Groups == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	return errCode(err)
}

// txnCode is errCode for a transaction API of the given version: clients
// before KIP-588 (fencedSince) know PRODUCER_FENCED as INVALID_PRODUCER_EPOCH.
func (b *Broker) txnCode(err error, version, fencedSince int16) int16 {
	if b.Txns == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	code := errCode(err)
	var ke *kerr.Error
	if code == kerr.UnknownServerError.Code && errors.As(err, &ke) {
		// A remote coordinator's answer, passed on as it came.
		code = ke.Code
	}
	if code == kerr.ProducerFenced.Code && version < fencedSince {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}

// produceTxnCode chooses a Produce error code for a failed verification,
// as Kafka does: coordinator trouble is retriable NOT_ENOUGH_REPLICAS,
// fencing is INVALID_PRODUCER_EPOCH.
func produceTxnCode(err error) int16 {
	switch {
	case errors.Is(err, txn.ErrNotCoordinator), errors.Is(err, txn.ErrCoordinatorLoadInProgress),
		errors.Is(err, txn.ErrCoordinatorNotAvailable), errors.Is(err, txn.ErrStorage):
		return kerr.NotEnoughReplicas.Code
	case errors.Is(err, txn.ErrProducerFenced):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, txn.ErrConcurrentTransactions):
		return kerr.ConcurrentTransactions.Code
	}
	// Any other answer of a remote coordinator is passed on as it came.
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return errCode(err)
}

// adminErrCode is errCode for the admin APIs: an unknown topic id is
// UNKNOWN_TOPIC_ID, although the controller's error also matches
// ErrUnknownTopic.
func adminErrCode(err error) int16 {
	if errors.Is(err, controller.ErrUnknownTopicID) {
		return kerr.UnknownTopicID.Code
	}
	return errCode(err)
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

// ErrorCode is the Kafka error code this package answers err with.
func ErrorCode(err error) int16 { return errCode(err) }
