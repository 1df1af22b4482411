package broker

import (
	"context"
	"fmt"
	"strconv"

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

// WriteTxnMarker writes a transaction marker to a partition's leader
// (txn.Markers.Write); it is the transaction coordinator's MarkerWriter.
func (b *Broker) WriteTxnMarker(tp txn.TopicPartition, m partition.TxnMarker) error {
	return b.TxnMarkers().Write(tp, m)
}

// AppendTxnMarker appends a marker to a partition led here
// (txn.Markers.Append).
func (b *Broker) AppendTxnMarker(ctx context.Context, p *partition.Partition, m partition.TxnMarker) error {
	return b.TxnMarkers().Append(ctx, p, m)
}

// TxnMarkers is the broker's marker writer, made on first use: the image
// names the leaders, markers to other leaders go on the peers' marker
// channel, and the group coordinator completes transactional offsets once a
// marker on __consumer_offsets is replicated.
func (b *Broker) TxnMarkers() *txn.Markers {
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
			Partition: func(tp txn.TopicPartition) (*partition.Partition, bool) { return b.Partition(tp.Topic, tp.Partition) },
			Send: func(id int32, send func(ctx context.Context, cl kmsg.Requestor) error) error {
				return b.SendPeer(id, replication.ChannelMarkers, send)
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

// TransactionTopic returns __transaction_state, creating it as Kafka does on
// the first FindCoordinator for a transactional id: compacted, with
// transactions.state_log_partitions partitions, min.insync.replicas 2 capped
// by the replication factor.
func (b *Broker) TransactionTopic() (*controller.Topic, error) {
	ctx, cancel := b.requestCtx()
	defer cancel()
	tc := b.Config.Transactions
	return b.EnsureInternalTopic(ctx, InternalTopic{
		Name: txn.StateTopic, Partitions: tc.StateLogPartitions,
		ReplicationFactor: tc.StateLogReplicationFactor,
		ConfigFor: func(rf int16) map[string]string {
			return map[string]string{
				"cleanup.policy":      "compact",
				"segment.bytes":       strconv.FormatInt(tc.StateLogSegmentBytes, 10),
				"compression.type":    "uncompressed",
				"min.insync.replicas": strconv.Itoa(int(min(rf, 2))),
			}
		},
		Unavailable: txn.ErrCoordinatorNotAvailable,
	})
}

// VerifyTxnProduce applies KIP-890 part 1 on the produce path: the first
// transactional batch of a producer on a partition is appended only if the
// partition is in its open transaction. With KIP-890 part 2 (produce v12+)
// the partition is added to the transaction instead. The transaction's
// coordinator is asked here when this broker is it, and with
// AddPartitionsToTxn v4+ when another broker is.
func (b *Broker) VerifyTxnProduce(version int16, txnID string, p *partition.Partition, records []byte) error {
	pid, epoch, ok := firstProducer(records)
	if !ok || p.OpenTxn(pid, epoch) {
		return nil
	}
	req := txn.AddPartitionsRequest{TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch,
		Partitions: []txn.TopicPartition{{Topic: p.Topic, Partition: p.Index}}}
	if version >= 12 {
		req.TransactionVersion = 2
	}
	coordinator, err := b.TxnCoordinatorOf(txnID)
	if err != nil {
		return err
	}
	if coordinator != b.Config.NodeID {
		return txn.AbortableFor(b.AddPartitionsRemote(coordinator, req), version >= 11)
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
	return txn.AbortableFor(errs[0], version >= 11)
}

// TxnCoordinatorOf is the broker coordinating a transactional id: the
// leader of its __transaction_state partition in the metadata image.
func (b *Broker) TxnCoordinatorOf(txnID string) (int32, error) {
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

// AddPartitionsRemote sends the broker form of AddPartitionsToTxn (v4+) to
// the coordinator on another broker: verify_only for KIP-890 part 1, an
// implicit add for transaction version 2. The answer comes back as the
// local coordinator's errors, so the produce path maps both alike.
func (b *Broker) AddPartitionsRemote(coordinator int32, req txn.AddPartitionsRequest) error {
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
	var resp *kmsg.AddPartitionsToTxnResponse
	err := b.SendPeer(coordinator, replication.ChannelVerify, func(ctx context.Context, cl kmsg.Requestor) error {
		var err error
		resp, err = ar.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if ar.Version < 4 {
			return fmt.Errorf("AddPartitionsToTxn v%d has no broker form", ar.Version)
		}
		return nil
	})
	if err != nil {
		// The coordinator cannot be reached: retriable for the producer.
		return fmt.Errorf("%w: %w", txn.ErrCoordinatorNotAvailable, err)
	}
	return AddPartitionsAnswer(resp, req.TransactionalID, coordinator)
}

// AddPartitionsAnswer is the coordinator error an AddPartitionsToTxn v4+
// answer of coordinator stands for, for transaction txnID.
func AddPartitionsAnswer(resp *kmsg.AddPartitionsToTxnResponse, txnID string, coordinator int32) error {
	return txnErrorFor(firstTxnCode(resp, txnID), coordinator)
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
		// The partition is not in the transaction; txn.AbortableFor
		// chooses the code the producer knows.
		base = txn.ErrNotInTransaction
	case kerr.InvalidTxnState.Code:
		base = txn.ErrInvalidTxnState
	default:
		return fmt.Errorf("broker: transaction coordinator %d: %w", coordinator, kErr)
	}
	return fmt.Errorf("%w: transaction coordinator %d: %v", base, coordinator, kErr)
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
