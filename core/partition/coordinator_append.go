package partition

// AppendCoordinator is Append for a coordinator's own writes to an internal
// topic: the group coordinator's transactional offset commits are batches
// of the producer with no sequence, so, as Kafka does for
// AppendOrigin.COORDINATOR, only their producer epoch is checked (an older
// epoch than the partition has seen is ErrInvalidProducerEpoch), not the
// sequence a client's idempotent batch must carry.
func (p *Partition) AppendCoordinator(records []byte) (AppendResult, error) {
	return p.appendFrom(records, originCoordinator)
}
