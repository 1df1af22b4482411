package txn

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/record"
)

// StateTopic is the internal topic of the transaction log.
const StateTopic = "__transaction_state"

// TopicPartition names a partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// State is a transaction's state, numbered as Kafka stores it.
type State int8

// The states of Kafka's TransactionState.
const (
	StateEmpty             State = 0
	StateOngoing           State = 1
	StatePrepareCommit     State = 2
	StatePrepareAbort      State = 3
	StateCompleteCommit    State = 4
	StateCompleteAbort     State = 5
	StateDead              State = 6
	StatePrepareEpochFence State = 7
)

// String is the state's name as DescribeTransactions and ListTransactions
// show it.
func (s State) String() string {
	switch s {
	case StateEmpty:
		return "Empty"
	case StateOngoing:
		return "Ongoing"
	case StatePrepareCommit:
		return "PrepareCommit"
	case StatePrepareAbort:
		return "PrepareAbort"
	case StateCompleteCommit:
		return "CompleteCommit"
	case StateCompleteAbort:
		return "CompleteAbort"
	case StateDead:
		return "Dead"
	case StatePrepareEpochFence:
		return "PrepareEpochFence"
	}
	return fmt.Sprintf("Unknown(%d)", int8(s))
}

// ParseState is the inverse of String.
func ParseState(name string) (State, bool) {
	for s := StateEmpty; s <= StatePrepareEpochFence; s++ {
		if s.String() == name {
			return s, true
		}
	}
	return 0, false
}

// PartitionFor is the __transaction_state partition of a transactional id:
// abs(javaHashCode(id)) % partitions, as Kafka computes it.
func PartitionFor(transactionalID string, partitions int32) int32 {
	if partitions <= 0 {
		return -1
	}
	var h int32
	for _, r := range transactionalID {
		if r >= 0x10000 { // a surrogate pair in Java's UTF-16
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	if h == -1<<31 {
		h = 0 // Kafka's Utils.abs maps MIN_VALUE to 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}

const (
	keyVersion = 0
	// maxValueVersion is the newest TransactionLogValue version known.
	maxValueVersion = 1
)

func encodeKey(id string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: id}
	return k.AppendTo(nil)
}

// decodeKey returns the transactional id of a key; ok is false for a key
// version this coordinator does not know (skipped, as Kafka does).
func decodeKey(b []byte) (id string, ok bool, err error) {
	if len(b) < 2 {
		return "", false, fmt.Errorf("%w: key of %d bytes", ErrCorrupt, len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != keyVersion {
		if v < 0 {
			return "", false, fmt.Errorf("%w: key version %d", ErrCorrupt, v)
		}
		return "", false, nil
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(b); err != nil {
		return "", false, fmt.Errorf("%w: key: %v", ErrCorrupt, err)
	}
	return k.TransactionalID, true, nil
}

// encodeValue writes a transaction's metadata: value v1 (flexible, with the
// KIP-890 tagged fields) for clients of transaction version 2, v0 otherwise.
func encodeValue(m *txnMeta) []byte {
	v := kmsg.NewTxnMetadataValue()
	if m.tv >= 2 {
		v.Version = 1
		v.PreviousProducerID, v.NextProducerID, v.ClientTransactionVersion = m.prevProducerID, m.nextProducerID, m.tv
		v.NextProducerEpoch = -1
	}
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = m.producerID, m.epoch, m.timeoutMs
	v.State = kmsg.TransactionState(m.state)
	v.LastUpdateTimestamp, v.StartTimestamp = m.updateMs, m.startMs
	byTopic := map[string][]int32{}
	for tp := range m.partitions {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	topics := make([]string, 0, len(byTopic))
	for t := range byTopic {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		ps := byTopic[t]
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: t, Partitions: ps})
	}
	return v.AppendTo(nil)
}

func decodeValue(id string, b []byte) (*txnMeta, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: value of %d bytes", ErrCorrupt, len(b))
	}
	if ver := int16(binary.BigEndian.Uint16(b)); ver < 0 || ver > maxValueVersion {
		return nil, fmt.Errorf("%w: value version %d", ErrCorrupt, ver)
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("%w: value: %v", ErrCorrupt, err)
	}
	if v.State < 0 || State(v.State) > StatePrepareEpochFence || v.ProducerID < 0 {
		return nil, fmt.Errorf("%w: state %d, producer id %d", ErrCorrupt, v.State, v.ProducerID)
	}
	m := &txnMeta{
		id: id, producerID: v.ProducerID, epoch: v.ProducerEpoch, lastEpoch: -1, timeoutMs: v.TimeoutMillis,
		state: State(v.State), startMs: v.StartTimestamp, updateMs: v.LastUpdateTimestamp,
		prevProducerID: -1, nextProducerID: -1, partitions: map[TopicPartition]bool{},
	}
	if v.Version >= 1 {
		m.prevProducerID, m.nextProducerID, m.tv = v.PreviousProducerID, v.NextProducerID, v.ClientTransactionVersion
	}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			m.partitions[TopicPartition{t.Topic, p}] = true
		}
	}
	return m, nil
}

// encodeBatch builds the batch holding one state record.
func encodeBatch(nowMs int64, key, value []byte) ([]byte, error) {
	b, err := record.Encode(record.BatchSpec{
		FirstTimestamp: nowMs, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
	}, []record.Record{{Key: key, Value: value}})
	if err != nil {
		return nil, fmt.Errorf("txn: encode state record: %w", err)
	}
	return b, nil
}
