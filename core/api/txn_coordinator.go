package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/replication"
	"github.com/gregorbroker/gregor/core/txn"
)

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

// TxnConfig is the coordinator's configuration from the broker's.
func TxnConfig(c config.Config) txn.Config {
	return txn.Config{
		MaxTimeout:         millis64(c.Transactions.MaxTimeoutMs),
		AbortCheckInterval: millis64(c.Transactions.AbortTimedOutCheckIntervalMs),
		Sync:               c.Log.Durability == config.DurabilityFsync,
		IDExpiration:       millis64(c.Transactions.TransactionalIDExpirationMs),
	}
}

// WriteTxnMarker writes a transaction marker to a partition's leader
// (txn.Markers.Write); it is the transaction coordinator's MarkerWriter.
func (b *Broker) WriteTxnMarker(tp txn.TopicPartition, m partition.TxnMarker) error {
	return b.txnMarkers().Write(tp, m)
}

// appendMarker appends a marker to a partition led here (txn.Markers.Append).
func (b *Broker) appendMarker(ctx context.Context, p *partition.Partition, m partition.TxnMarker) error {
	return b.txnMarkers().Append(ctx, p, m)
}

// txnMarkers is the broker's marker writer, made on first use: the image
// names the leaders, markers to other leaders go on the peers' marker
// channel, and the group coordinator completes transactional offsets once a
// marker on __consumer_offsets is replicated.
func (b *Broker) txnMarkers() *txn.Markers {
	b.markersOnce.Do(func() {
		b.markers = &txn.Markers{
			NodeID: b.Config.NodeID,
			Leader: func(tp txn.TopicPartition) (int32, bool) {
				t, known := b.Controller.Image().Topic(tp.Topic)
				if !known || tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
					return -1, false
				}
				return t.Partitions[tp.Partition].Leader, true
			},
			Partition: func(tp txn.TopicPartition) (*partition.Partition, bool) { return b.partition(tp.Topic, tp.Partition) },
			Send: func(id int32, send func(ctx context.Context, cl kmsg.Requestor) error) error {
				return b.withPeer(id, replication.ChannelMarkers, send)
			},
			Replicated: func(p *partition.Partition, m partition.TxnMarker, off int64) {
				if p.Topic == group.OffsetsTopic && b.Groups != nil {
					b.Groups.CompleteTxn(p.Index, m.ProducerID, m.Commit, off)
				}
			},
			Sync:   b.Config.Log.Durability == config.DurabilityFsync,
			Done:   b.Done,
			Logger: b.Logger,
		}
	})
	return b.markers
}

// transactionTopic returns __transaction_state, creating it as Kafka does on
// the first FindCoordinator for a transactional id: compacted, with
// transactions.state_log_partitions partitions, min.insync.replicas 2 capped
// by the replication factor.
func (b *Broker) transactionTopic() (*controller.Topic, error) {
	tc := b.Config.Transactions
	return b.ensureInternalTopic(internalTopic{
		name: txn.StateTopic, partitions: tc.StateLogPartitions,
		replicationFactor: tc.StateLogReplicationFactor,
		configFor: func(rf int16) map[string]string {
			return map[string]string{
				"cleanup.policy":      "compact",
				"segment.bytes":       strconv.FormatInt(tc.StateLogSegmentBytes, 10),
				"compression.type":    "uncompressed",
				"min.insync.replicas": strconv.Itoa(int(min(rf, 2))),
			}
		},
		unavailable: txn.ErrCoordinatorNotAvailable,
	})
}

// verifyTxnProduce applies KIP-890 part 1 on the produce path: the first
// transactional batch of a producer on a partition is appended only if the
// partition is in its open transaction. With KIP-890 part 2 (produce v12+)
// the partition is added to the transaction instead. The transaction's
// coordinator is asked here when this broker is it, and with
// AddPartitionsToTxn v4+ when another broker is.
func (b *Broker) verifyTxnProduce(version int16, txnID string, p *partition.Partition, records []byte) error {
	pid, epoch, ok := firstProducer(records)
	if !ok || p.OpenTxn(pid, epoch) {
		return nil
	}
	req := txn.AddPartitionsRequest{TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch,
		Partitions: []txn.TopicPartition{{Topic: p.Topic, Partition: p.Index}}}
	if version >= 12 {
		req.TransactionVersion = 2
	}
	coordinator, err := b.txnCoordinatorOf(txnID)
	if err != nil {
		return err
	}
	if coordinator != b.Config.NodeID {
		return abortableFor(b.addPartitionsRemote(coordinator, req), version >= 11)
	}
	if b.Txns == nil {
		return txn.ErrCoordinatorNotAvailable
	}
	if req.TransactionVersion >= 2 {
		return b.Txns.AddPartitions(req)
	}
	errs, err := b.Txns.Verify(req)
	if err != nil {
		return err
	}
	return abortableFor(errs[0], version >= 11)
}

// txnCoordinatorOf is the broker coordinating a transactional id: the
// leader of its __transaction_state partition in the metadata image.
func (b *Broker) txnCoordinatorOf(txnID string) (int32, error) {
	t, ok := b.Controller.Image().Topic(txn.StateTopic)
	if !ok || len(t.Partitions) == 0 {
		return -1, fmt.Errorf("%w: %s does not exist", txn.ErrCoordinatorNotAvailable, txn.StateTopic)
	}
	idx := txn.PartitionFor(txnID, int32(len(t.Partitions)))
	leader := t.Partitions[idx].Leader
	if leader < 0 {
		return -1, fmt.Errorf("%w: %s-%d has no leader", txn.ErrCoordinatorNotAvailable, txn.StateTopic, idx)
	}
	return leader, nil
}

// addPartitionsRemote sends the broker form of AddPartitionsToTxn (v4+) to
// the coordinator on another broker: verify_only for KIP-890 part 1, an
// implicit add for transaction version 2. The answer comes back as the
// local coordinator's errors, so the produce path maps both alike.
func (b *Broker) addPartitionsRemote(coordinator int32, req txn.AddPartitionsRequest) error {
	ar := kmsg.NewPtrAddPartitionsToTxnRequest()
	rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
	rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch = req.TransactionalID, req.ProducerID, req.ProducerEpoch
	rt.VerifyOnly = req.TransactionVersion < 2
	for _, tp := range req.Partitions {
		tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		tt.Topic, tt.Partitions = tp.Topic, []int32{tp.Partition}
		rt.Topics = append(rt.Topics, tt)
	}
	ar.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{rt}
	var code int16
	err := b.withPeer(coordinator, replication.ChannelVerify, func(ctx context.Context, cl kmsg.Requestor) error {
		resp, err := ar.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if ar.Version < 4 {
			return fmt.Errorf("AddPartitionsToTxn v%d has no broker form", ar.Version)
		}
		code = firstTxnCode(resp, req.TransactionalID)
		return nil
	})
	if err != nil {
		// The coordinator cannot be reached: retriable for the producer.
		return fmt.Errorf("%w: %w", txn.ErrCoordinatorNotAvailable, err)
	}
	return txnErrorFor(code, coordinator)
}

// firstTxnCode is the first error of a transaction in an
// AddPartitionsToTxn v4+ answer: the top-level one, or the first failed
// partition's. A transaction missing from the answer is
// COORDINATOR_NOT_AVAILABLE.
func firstTxnCode(resp *kmsg.AddPartitionsToTxnResponse, txnID string) int16 {
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	for _, rt := range resp.Transactions {
		if rt.TransactionalID != txnID {
			continue
		}
		for _, tt := range rt.Topics {
			for _, p := range tt.Partitions {
				if p.ErrorCode != 0 {
					return p.ErrorCode
				}
			}
		}
		return 0
	}
	return kerr.CoordinatorNotAvailable.Code
}

// txnErrorFor turns a coordinator's error code into the coordinator error
// it stands for.
func txnErrorFor(code int16, coordinator int32) error {
	if code == 0 {
		return nil
	}
	kErr := kerr.ErrorForCode(code)
	var base error
	switch code {
	case kerr.NotCoordinator.Code:
		base = txn.ErrNotCoordinator
	case kerr.CoordinatorLoadInProgress.Code:
		base = txn.ErrCoordinatorLoadInProgress
	case kerr.CoordinatorNotAvailable.Code:
		base = txn.ErrCoordinatorNotAvailable
	case kerr.ProducerFenced.Code, kerr.InvalidProducerEpoch.Code:
		base = txn.ErrProducerFenced
	case kerr.InvalidProducerIDMapping.Code:
		base = txn.ErrInvalidProducerIDMapping
	case kerr.ConcurrentTransactions.Code:
		base = txn.ErrConcurrentTransactions
	case kerr.TransactionAbortable.Code:
		// The partition is not in the transaction; abortableFor chooses
		// the code the producer knows.
		base = txn.ErrNotInTransaction
	case kerr.InvalidTxnState.Code:
		base = txn.ErrInvalidTxnState
	default:
		return fmt.Errorf("api: transaction coordinator %d: %w", coordinator, kErr)
	}
	return fmt.Errorf("%w: transaction coordinator %d: %v", base, coordinator, kErr)
}

// errTransactionAbortable is an error the client can get past by aborting
// its transaction (TRANSACTION_ABORTABLE, KIP-890).
var errTransactionAbortable = errors.New("api: transaction abortable")

// abortableFor turns a partition missing from the transaction into
// TRANSACTION_ABORTABLE for clients that know that code: Produce v11+ and
// the broker-to-coordinator AddPartitionsToTxn v4+. Older clients get
// INVALID_TXN_STATE, as from Kafka 4.x.
func abortableFor(err error, supported bool) error {
	if supported && errors.Is(err, txn.ErrNotInTransaction) {
		return fmt.Errorf("%w: %w", errTransactionAbortable, err)
	}
	return err
}

// firstProducer returns the producer of a produce request's first batch when
// that batch is transactional.
func firstProducer(records []byte) (producerID int64, epoch int16, ok bool) {
	h, err := record.ParseHeader(records)
	if err != nil || !h.IsTransactional() || h.ProducerID < 0 {
		return 0, 0, false
	}
	return h.ProducerID, h.ProducerEpoch, true
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

func millis64(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
