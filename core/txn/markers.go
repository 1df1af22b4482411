package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/partition"
)

// MarkerTimeout bounds the ISR wait of a marker the coordinator writes to a
// partition led here; the coordinator retries a marker that timed out.
const MarkerTimeout = 5 * time.Second

// Markers writes transaction markers to the leaders of the partitions a
// transaction touched: appended here when this broker leads the partition,
// sent as WriteTxnMarkers to the leader otherwise (as Kafka's coordinator
// does). Its Write is the coordinator's MarkerWriter. It reaches the
// metadata image, the hosted partitions, the other brokers and the group
// coordinator only through the functions it is given.
type Markers struct {
	// NodeID is this broker's id.
	NodeID int32
	// Leader returns the leader of tp in the metadata image (-1 when it has
	// none); false when the topic or the partition no longer exists.
	Leader func(tp TopicPartition) (int32, bool)
	// Partition returns tp when it is hosted here.
	Partition func(tp TopicPartition) (*partition.Partition, bool)
	// Send calls send with a client of broker id on the marker channel.
	Send func(id int32, send func(ctx context.Context, cl kmsg.Requestor) error) error
	// Replicated is called once a marker appended here at offset off is
	// replicated (the group coordinator completes transactional offsets on
	// __consumer_offsets then, not before); nil calls nothing.
	Replicated func(p *partition.Partition, m partition.TxnMarker, off int64)
	// Sync fsyncs the partition before waiting for the ISR (log durability
	// fsync).
	Sync bool
	// Done ends the wait for replication when the broker shuts down.
	Done   <-chan struct{}
	Logger *slog.Logger
}

// Write writes a marker to tp's leader. An error leaves the marker for the
// transaction coordinator to retry; ErrMarkerDropped means the marker is not
// needed (the partition is gone, or a newer epoch already closed this
// producer's transaction there).
func (w *Markers) Write(tp TopicPartition, m partition.TxnMarker) error {
	leader, known := w.Leader(tp)
	switch {
	case !known:
		// The topic was deleted: its partitions need no marker.
		return ErrMarkerDropped
	case leader == w.NodeID:
		return w.writeLocal(tp, m)
	case leader < 0:
		return fmt.Errorf("txn: %s-%d has no leader", tp.Topic, tp.Partition)
	}
	return w.writeRemote(leader, tp, m)
}

// writeLocal appends a marker to a partition led here.
func (w *Markers) writeLocal(tp TopicPartition, m partition.TxnMarker) error {
	p, ok := w.Partition(tp)
	if !ok {
		return fmt.Errorf("txn: %s-%d is not hosted here", tp.Topic, tp.Partition)
	}
	ctx, cancel := context.WithTimeout(context.Background(), MarkerTimeout)
	defer cancel()
	if w.Done != nil {
		go func() {
			select {
			case <-w.Done:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	if err := w.Append(ctx, p, m); err != nil {
		if errors.Is(err, partition.ErrInvalidProducerEpoch) || errors.Is(err, partition.ErrCoordinatorFenced) {
			// A newer epoch already closed this producer's transaction here.
			w.logger().Warn("transaction marker refused", "topic", tp.Topic, "partition", tp.Partition,
				"producer_id", m.ProducerID, "err", err)
			return ErrMarkerDropped
		}
		return err
	}
	return nil
}

// Append writes a marker to a partition this broker leads as an acks=-1
// write (Kafka's markers are): fenced by the leader epoch it was admitted
// in, with min.insync.replicas checked, and done only once the high
// watermark passed it. The WriteTxnMarkers handler appends through it too.
func (w *Markers) Append(ctx context.Context, p *partition.Partition, m partition.TxnMarker) error {
	if leader, _ := p.Leadership(); leader != w.NodeID {
		return fmt.Errorf("txn: %s-%d: %w (led by broker %d)", p.Topic, p.Index, partition.ErrNotLeader, leader)
	}
	epoch, err := p.Admit()
	if err != nil {
		return err
	}
	off, err := p.WriteTxnMarkerInEpoch(epoch, m)
	if err != nil {
		return err
	}
	if w.Sync {
		if err := p.Sync(); err != nil {
			return err
		}
	}
	if err := p.WaitReplicated(ctx, epoch, off+1); err != nil {
		return err
	}
	if w.Replicated != nil {
		w.Replicated(p, m, off)
	}
	return nil
}

// writeRemote sends a marker to the partition's leader with
// WriteTxnMarkers. The leader's answer is read as the local append's:
// INVALID_PRODUCER_EPOCH and TRANSACTION_COORDINATOR_FENCED drop the marker
// (a newer epoch closed the transaction), any other error or a lost answer
// leaves it to be retried.
func (w *Markers) writeRemote(leader int32, tp TopicPartition, m partition.TxnMarker) error {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	rm := kmsg.NewWriteTxnMarkersRequestMarker()
	rm.ProducerID, rm.ProducerEpoch, rm.Committed, rm.CoordinatorEpoch = m.ProducerID, m.ProducerEpoch, m.Commit, m.CoordinatorEpoch
	rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	rt.Topic, rt.Partitions = tp.Topic, []int32{tp.Partition}
	rm.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{rt}
	req.Markers = []kmsg.WriteTxnMarkersRequestMarker{rm}
	var code int16 = -1
	err := w.Send(leader, func(ctx context.Context, cl kmsg.Requestor) error {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		for _, sm := range resp.Markers {
			if sm.ProducerID != m.ProducerID {
				continue
			}
			for _, st := range sm.Topics {
				for _, sp := range st.Partitions {
					if st.Topic == tp.Topic && sp.Partition == tp.Partition {
						code = sp.ErrorCode
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("txn: marker for %s-%d: %w", tp.Topic, tp.Partition, err)
	}
	switch code {
	case 0:
		return nil
	case -1:
		return fmt.Errorf("txn: marker for %s-%d: broker %d answered without the partition", tp.Topic, tp.Partition, leader)
	case kerr.InvalidProducerEpoch.Code, kerr.TransactionCoordinatorFenced.Code:
		w.logger().Warn("transaction marker refused", "topic", tp.Topic, "partition", tp.Partition,
			"producer_id", m.ProducerID, "leader", leader, "err", kerr.ErrorForCode(code))
		return ErrMarkerDropped
	}
	return fmt.Errorf("txn: marker for %s-%d on broker %d: %w", tp.Topic, tp.Partition, leader, kerr.ErrorForCode(code))
}

func (w *Markers) logger() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}
