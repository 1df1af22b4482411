package api

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/share"
	"github.com/gregorbroker/gregor/core/txn"
)

// TestErrCodeSentinels pins the Kafka code every sentinel error of the layers
// below maps to. The table was taken from the mapping as it stood when the
// entries were spread over init functions; a moved or dropped entry fails it.
func TestErrCodeSentinels(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want *kerr.Error
	}{
		{"controller.ErrElectionNotNeeded", controller.ErrElectionNotNeeded, kerr.ElectionNotNeeded},
		{"controller.ErrPreferredLeaderNotAvailable", controller.ErrPreferredLeaderNotAvailable, kerr.PreferredLeaderNotAvailable},
		{"controller.ErrEligibleLeadersNotAvailable", controller.ErrEligibleLeadersNotAvailable, kerr.EligibleLeadersNotAvailable},
		{"controller.ErrNoReassignmentInProgress", controller.ErrNoReassignmentInProgress, kerr.NoReassignmentInProgress},
		{"controller.ErrStaleBrokerEpoch", controller.ErrStaleBrokerEpoch, kerr.StaleBrokerEpoch},
		{"controller.ErrBrokerNotRegistered", controller.ErrBrokerNotRegistered, kerr.BrokerIDNotRegistered},
		{"controller.ErrFencedLeaderEpoch", controller.ErrFencedLeaderEpoch, kerr.FencedLeaderEpoch},
		{"controller.ErrInvalidUpdateVersion", controller.ErrInvalidUpdateVersion, kerr.InvalidUpdateVersion},
		{"controller.ErrIneligibleReplica", controller.ErrIneligibleReplica, kerr.IneligibleReplica},
		{"controller.ErrInvalidReplicationFactor", controller.ErrInvalidReplicationFactor, kerr.InvalidReplicationFactor},
		{"group.ErrInvalidRegularExpression", group.ErrInvalidRegularExpression, kerr.InvalidRegularExpression},
		{"group.ErrStreamsInvalidTopology", group.ErrStreamsInvalidTopology, kerr.StreamsInvalidTopology},
		{"group.ErrStreamsInvalidTopologyEpoch", group.ErrStreamsInvalidTopologyEpoch, kerr.StreamsInvalidTopologyEpoch},
		{"controller.ErrInvalidReplicaAssignment", controller.ErrInvalidReplicaAssignment, kerr.InvalidReplicaAssignment},
		{"controller.ErrPolicyViolation", controller.ErrPolicyViolation, kerr.PolicyViolation},
		{"partition.ErrCorruptMessage", partition.ErrCorruptMessage, kerr.CorruptMessage},
		{"partition.ErrMessageTooLarge", partition.ErrMessageTooLarge, kerr.MessageTooLarge},
		{"partition.ErrInvalidRecord", partition.ErrInvalidRecord, kerr.InvalidRecord},
		{"partition.ErrInvalidTimestamp", partition.ErrInvalidTimestamp, kerr.InvalidTimestamp},
		{"partition.ErrUnsupportedForMagic", partition.ErrUnsupportedForMagic, kerr.UnsupportedForMessageFormat},
		{"partition.ErrOutOfOrderSequence", partition.ErrOutOfOrderSequence, kerr.OutOfOrderSequenceNumber},
		{"partition.ErrInvalidProducerEpoch", partition.ErrInvalidProducerEpoch, kerr.InvalidProducerEpoch},
		{"partition.ErrNotLeader", partition.ErrNotLeader, kerr.NotLeaderForPartition},
		{"partition.ErrFencedLeaderEpoch", partition.ErrFencedLeaderEpoch, kerr.FencedLeaderEpoch},
		{"partition.ErrNotEnoughReplicasAfterAppend", partition.ErrNotEnoughReplicasAfterAppend, kerr.NotEnoughReplicasAfterAppend},
		{"partition.ErrReplicationTimeout", partition.ErrReplicationTimeout, kerr.RequestTimedOut},
		{"partition.ErrUnknownLeaderEpoch", partition.ErrUnknownLeaderEpoch, kerr.UnknownLeaderEpoch},
		{"partition.ErrOffsetOutOfRange", partition.ErrOffsetOutOfRange, kerr.OffsetOutOfRange},
		{"partition.ErrNotEnoughReplicas", partition.ErrNotEnoughReplicas, kerr.NotEnoughReplicas},
		{"partition.ErrStorage", partition.ErrStorage, kerr.KafkaStorageError},
		{"partition.ErrClosed", partition.ErrClosed, kerr.NotLeaderForPartition},
		{"controller.ErrTopicExists", controller.ErrTopicExists, kerr.TopicAlreadyExists},
		{"controller.ErrUnknownTopic", controller.ErrUnknownTopic, kerr.UnknownTopicOrPartition},
		{"controller.ErrInvalidTopic", controller.ErrInvalidTopic, kerr.InvalidTopicException},
		{"controller.ErrInvalidPartitions", controller.ErrInvalidPartitions, kerr.InvalidPartitions},
		{"controller.ErrInvalidConfig", controller.ErrInvalidConfig, kerr.InvalidConfig},
		{"controller.ErrNotController", controller.ErrNotController, kerr.NotController},
		{"controller.ErrInvalidRequest", controller.ErrInvalidRequest, kerr.InvalidRequest},
		{"context.DeadlineExceeded", context.DeadlineExceeded, kerr.RequestTimedOut},
		{"context.Canceled", context.Canceled, kerr.RequestTimedOut},
		{"group.ErrNotCoordinator", group.ErrNotCoordinator, kerr.NotCoordinator},
		{"group.ErrCoordinatorLoadInProgress", group.ErrCoordinatorLoadInProgress, kerr.CoordinatorLoadInProgress},
		{"group.ErrCoordinatorNotAvailable", group.ErrCoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{"group.ErrInvalidGroupID", group.ErrInvalidGroupID, kerr.InvalidGroupID},
		{"group.ErrUnknownMemberID", group.ErrUnknownMemberID, kerr.UnknownMemberID},
		{"group.ErrIllegalGeneration", group.ErrIllegalGeneration, kerr.IllegalGeneration},
		{"group.ErrRebalanceInProgress", group.ErrRebalanceInProgress, kerr.RebalanceInProgress},
		{"group.ErrMemberIDRequired", group.ErrMemberIDRequired, kerr.MemberIDRequired},
		{"group.ErrInconsistentGroupProtocol", group.ErrInconsistentGroupProtocol, kerr.InconsistentGroupProtocol},
		{"group.ErrInvalidSessionTimeout", group.ErrInvalidSessionTimeout, kerr.InvalidSessionTimeout},
		{"group.ErrGroupMaxSizeReached", group.ErrGroupMaxSizeReached, kerr.GroupMaxSizeReached},
		{"group.ErrFencedInstanceID", group.ErrFencedInstanceID, kerr.FencedInstanceID},
		{"group.ErrGroupIDNotFound", group.ErrGroupIDNotFound, kerr.GroupIDNotFound},
		{"group.ErrNonEmptyGroup", group.ErrNonEmptyGroup, kerr.NonEmptyGroup},
		{"group.ErrOffsetMetadataTooLarge", group.ErrOffsetMetadataTooLarge, kerr.OffsetMetadataTooLarge},
		{"group.ErrGroupSubscribedToTopic", group.ErrGroupSubscribedToTopic, kerr.GroupSubscribedToTopic},
		{"group.ErrFencedMemberEpoch", group.ErrFencedMemberEpoch, kerr.FencedMemberEpoch},
		{"group.ErrStaleMemberEpoch", group.ErrStaleMemberEpoch, kerr.StaleMemberEpoch},
		{"group.ErrUnreleasedInstanceID", group.ErrUnreleasedInstanceID, kerr.UnreleasedInstanceID},
		{"group.ErrUnsupportedAssignor", group.ErrUnsupportedAssignor, kerr.UnsupportedAssignor},
		{"group.ErrInvalidRequest", group.ErrInvalidRequest, kerr.InvalidRequest},
		{"group.ErrUnknownTopicOrPartition", group.ErrUnknownTopicOrPartition, kerr.UnknownTopicOrPartition},
		{"group.ErrInvalidCommitOffsetSize", group.ErrInvalidCommitOffsetSize, kerr.InvalidCommitOffsetSize},
		{"group.ErrStorage", group.ErrStorage, kerr.CoordinatorNotAvailable},
		{"share.ErrInvalidRecordState", share.ErrInvalidRecordState, kerr.InvalidRecordState},
		{"share.ErrInvalidRequest", share.ErrInvalidRequest, kerr.InvalidRequest},
		{"share.ErrUnknownMemberID", share.ErrUnknownMemberID, kerr.UnknownMemberID},
		{"share.ErrFencedMemberEpoch", share.ErrFencedMemberEpoch, kerr.FencedMemberEpoch},
		{"share.ErrGroupMaxSizeReached", share.ErrGroupMaxSizeReached, kerr.GroupMaxSizeReached},
		{"share.ErrGroupIDNotFound", share.ErrGroupIDNotFound, kerr.GroupIDNotFound},
		{"share.ErrInconsistentGroupProtocol", share.ErrInconsistentGroupProtocol, kerr.InconsistentGroupProtocol},
		{"share.ErrNonEmptyGroup", share.ErrNonEmptyGroup, kerr.NonEmptyGroup},
		{"share.ErrShareSessionNotFound", share.ErrShareSessionNotFound, kerr.ShareSessionNotFound},
		{"share.ErrInvalidShareSessionEpoch", share.ErrInvalidShareSessionEpoch, kerr.InvalidShareSessionEpoch},
		{"share.ErrShareSessionLimitReached", share.ErrShareSessionLimitReached, kerr.ShareSessionLimitReached},
		{"txn.ErrTransactionAbortable", txn.ErrTransactionAbortable, kerr.TransactionAbortable},
		{"txn.ErrNotCoordinator", txn.ErrNotCoordinator, kerr.NotCoordinator},
		{"txn.ErrCoordinatorLoadInProgress", txn.ErrCoordinatorLoadInProgress, kerr.CoordinatorLoadInProgress},
		{"txn.ErrCoordinatorNotAvailable", txn.ErrCoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{"txn.ErrInvalidProducerIDMapping", txn.ErrInvalidProducerIDMapping, kerr.InvalidProducerIDMapping},
		{"txn.ErrProducerFenced", txn.ErrProducerFenced, kerr.ProducerFenced},
		{"txn.ErrConcurrentTransactions", txn.ErrConcurrentTransactions, kerr.ConcurrentTransactions},
		{"txn.ErrInvalidTxnState", txn.ErrInvalidTxnState, kerr.InvalidTxnState},
		{"txn.ErrNotInTransaction", txn.ErrNotInTransaction, kerr.InvalidTxnState},
		{"txn.ErrInvalidTimeout", txn.ErrInvalidTimeout, kerr.InvalidTransactionTimeout},
		{"txn.ErrInvalidRequest", txn.ErrInvalidRequest, kerr.InvalidRequest},
		{"txn.ErrTransactionalIDNotFound", txn.ErrTransactionalIDNotFound, kerr.TransactionalIDNotFound},
		{"txn.ErrStorage", txn.ErrStorage, kerr.CoordinatorNotAvailable},
		{"group.ErrProducerFenced", group.ErrProducerFenced, kerr.ProducerFenced},
		{"partition.ErrInvalidTxnState", partition.ErrInvalidTxnState, kerr.InvalidTxnState},
		{"partition.ErrCoordinatorFenced", partition.ErrCoordinatorFenced, kerr.TransactionCoordinatorFenced},
	} {
		if got := errCode(tc.err); got != tc.want.Code {
			t.Errorf("errCode(%s) = %d (%v), want %d (%s)", tc.name, got, kerr.ErrorForCode(got), tc.want.Code, tc.want.Message)
		}
		wrapped := fmt.Errorf("layer: %w", tc.err)
		if got := errCode(wrapped); got != tc.want.Code {
			t.Errorf("errCode(wrapped %s) = %d, want %d", tc.name, got, tc.want.Code)
		}
	}
}

// TestErrCodePrecedence pins which code wins when an error wraps two
// sentinels: the first entry of errMap that matches.
func TestErrCodePrecedence(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want *kerr.Error
	}{
		{"abortable over not in transaction", fmt.Errorf("%w: %w", txn.ErrTransactionAbortable, txn.ErrNotInTransaction), kerr.TransactionAbortable},
		{"not in transaction over abortable", fmt.Errorf("%w: %w", txn.ErrNotInTransaction, txn.ErrTransactionAbortable), kerr.TransactionAbortable},
		{"partition not leader over group storage", fmt.Errorf("%w: %w", group.ErrStorage, partition.ErrNotLeader), kerr.NotLeaderForPartition},
		{"partition min ISR over txn storage", fmt.Errorf("%w: %w", txn.ErrStorage, partition.ErrNotEnoughReplicas), kerr.NotEnoughReplicas},
		{"timeout over group storage", fmt.Errorf("%w: %w", group.ErrStorage, context.DeadlineExceeded), kerr.RequestTimedOut},
		{"unknown topic id wraps unknown topic", fmt.Errorf("%w: %w", controller.ErrUnknownTopicID, controller.ErrUnknownTopic), kerr.UnknownTopicOrPartition},
		{"share invalid request over group coordinator", fmt.Errorf("%w: %w", share.ErrInvalidRequest, group.ErrNotCoordinator), kerr.NotCoordinator},
		{"controller replication factor before txn", fmt.Errorf("%w: %w", txn.ErrInvalidRequest, controller.ErrInvalidReplicationFactor), kerr.InvalidReplicationFactor},
		{"unmapped", fmt.Errorf("layer: plain"), kerr.UnknownServerError},
	} {
		if got := errCode(tc.err); got != tc.want.Code {
			t.Errorf("%s: errCode = %d (%v), want %d (%s)", tc.name, got, kerr.ErrorForCode(got), tc.want.Code, tc.want.Message)
		}
	}
	if errCode(nil) != 0 {
		t.Error("errCode(nil) != 0")
	}
}
