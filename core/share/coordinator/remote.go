package coordinator

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/share"
)

// The share-state RPCs this broker sends to the share coordinator of a
// share-partition led elsewhere, one share-partition a request.

// remoteErr turns a share-state answer's error code into the errors of
// this package (the cause kept beside them).
func remoteErr(code int16, msg *string) error {
	kind := kerr.ErrorForCode(code)
	if kind == nil {
		return nil
	}
	var sentinel error
	switch kind {
	case kerr.NotCoordinator:
		sentinel = ErrNotCoordinator
	case kerr.CoordinatorLoadInProgress:
		sentinel = ErrCoordinatorLoadInProgress
	case kerr.CoordinatorNotAvailable:
		sentinel = ErrCoordinatorNotAvailable
	case kerr.FencedLeaderEpoch:
		sentinel = ErrFencedLeaderEpoch
	case kerr.FencedStateEpoch:
		sentinel = ErrFencedStateEpoch
	case kerr.UnknownTopicOrPartition:
		sentinel = ErrUnknownTopicOrPartition
	case kerr.InvalidRequest:
		sentinel = ErrInvalidRequest
	default:
		sentinel = ErrCoordinatorNotAvailable
	}
	if msg != nil {
		return fmt.Errorf("%w: %w: %s", sentinel, kind, *msg)
	}
	return fmt.Errorf("%w: %w", sentinel, kind)
}

func (c *Coordinator) send(leader int32, req kmsg.Request) (kmsg.Response, error) {
	resp, err := c.broker.Send(leader, req)
	if err != nil {
		return nil, fmt.Errorf("%w: share coordinator %d: %w", ErrCoordinatorNotAvailable, leader, err)
	}
	return resp, nil
}

func (c *Coordinator) remoteRead(leader int32, k share.PartitionKey, leaderEpoch int32) (State, bool, error) {
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = k.Group
	t := kmsg.NewReadShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewReadShareGroupStateRequestTopicPartition()
	p.Partition, p.LeaderEpoch = k.Partition, leaderEpoch
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	r, err := c.send(leader, req)
	if err != nil {
		return State{}, false, err
	}
	resp := r.(*kmsg.ReadShareGroupStateResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return State{}, false, fmt.Errorf("%w: ReadShareGroupState answer without the partition", ErrCoordinatorNotAvailable)
	}
	rp := resp.Topics[0].Partitions[0]
	if err := remoteErr(rp.ErrorCode, rp.ErrorMessage); err != nil {
		return State{}, false, err
	}
	if rp.StartOffset == -1 {
		return State{}, false, nil
	}
	st := State{StateEpoch: rp.StateEpoch, StartOffset: rp.StartOffset}
	for _, b := range rp.StateBatches {
		st.Batches = append(st.Batches, share.StateBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset,
			State: share.RecordState(b.DeliveryState), DeliveryCount: b.DeliveryCount})
	}
	return st, true, nil
}

func (c *Coordinator) remoteWrite(leader int32, k share.PartitionKey, stateEpoch, leaderEpoch int32, snap share.Snapshot) error {
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.GroupID = k.Group
	t := kmsg.NewWriteShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.LeaderEpoch, p.StartOffset = k.Partition, stateEpoch, leaderEpoch, snap.StartOffset
	for _, b := range snap.Batches {
		p.StateBatches = append(p.StateBatches, kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch{
			FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, DeliveryState: int8(b.State), DeliveryCount: b.DeliveryCount})
	}
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	r, err := c.send(leader, req)
	if err != nil {
		return err
	}
	resp := r.(*kmsg.WriteShareGroupStateResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return fmt.Errorf("%w: WriteShareGroupState answer without the partition", ErrCoordinatorNotAvailable)
	}
	rp := resp.Topics[0].Partitions[0]
	return remoteErr(rp.ErrorCode, rp.ErrorMessage)
}

func (c *Coordinator) remoteInitialize(leader int32, k share.PartitionKey, stateEpoch int32, startOffset int64) error {
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = k.Group
	t := kmsg.NewInitializeShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.StartOffset = k.Partition, stateEpoch, startOffset
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	r, err := c.send(leader, req)
	if err != nil {
		return err
	}
	resp := r.(*kmsg.InitializeShareGroupStateResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return fmt.Errorf("%w: InitializeShareGroupState answer without the partition", ErrCoordinatorNotAvailable)
	}
	rp := resp.Topics[0].Partitions[0]
	return remoteErr(rp.ErrorCode, rp.ErrorMessage)
}

func (c *Coordinator) remoteDelete(leader int32, k share.PartitionKey) error {
	req := kmsg.NewPtrDeleteShareGroupStateRequest()
	req.GroupID = k.Group
	t := kmsg.NewDeleteShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
	p.Partition = k.Partition
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	r, err := c.send(leader, req)
	if err != nil {
		return err
	}
	resp := r.(*kmsg.DeleteShareGroupStateResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return fmt.Errorf("%w: DeleteShareGroupState answer without the partition", ErrCoordinatorNotAvailable)
	}
	rp := resp.Topics[0].Partitions[0]
	return remoteErr(rp.ErrorCode, rp.ErrorMessage)
}
