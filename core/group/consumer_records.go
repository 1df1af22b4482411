package group

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The records of consumer (KIP-848) groups in __consumer_offsets are Apache
// Kafka 4.x's, from its group coordinator's message definitions
// (group-coordinator/src/main/resources/common/message/ConsumerGroup*.json):
// the key's int16 version is the record type, followed by the key's fields
// in the non-flexible encoding; the value is an int16 version (0 for all of
// them) followed by its fields in the flexible encoding (compact strings
// and arrays, tagged fields after each struct).
//
//	3 ConsumerGroupMetadata          key GroupId             value Epoch int32, tag 0 MetadataHash int64
//	4 ConsumerGroupPartitionMetadata key GroupId             value Topics [TopicId uuid, TopicName string,
//	                                                          NumPartitions int32, PartitionMetadata [Partition int32, Racks [string]]]
//	5 ConsumerGroupMemberMetadata    key GroupId, MemberId   value InstanceId string?, RackId string?, ClientId string,
//	                                                          ClientHost string, SubscribedTopicNames [string],
//	                                                          SubscribedTopicRegex string?, RebalanceTimeoutMs int32,
//	                                                          ServerAssignor string?, tag 0 ClassicMemberMetadata
//	6 ConsumerGroupTargetAssignmentMetadata key GroupId      value AssignmentEpoch int32
//	7 ConsumerGroupTargetAssignmentMember   key GroupId, MemberId value TopicPartitions [TopicId uuid, Partitions [int32]]
//	8 ConsumerGroupCurrentMemberAssignment  key GroupId, MemberId value MemberEpoch int32, PreviousMemberEpoch int32,
//	                                                          State int8, AssignedPartitions [TopicPartitions],
//	                                                          PartitionsPendingRevocation [TopicPartitions]
//
// Gregor writes no partition racks, no ClassicMemberMetadata and no
// AssignmentEpochs (tag 0 of TopicPartitions); it skips every tagged field
// it does not know when reading. Its MetadataHash is its own fingerprint of
// the subscribed topics (metadataHash), not Kafka's: it is compared only with
// what Gregor computes.
const (
	keyConsumerGroupMetadata          = 3
	keyConsumerGroupPartitionMetadata = 4
	keyConsumerGroupMemberMetadata    = 5
	keyConsumerGroupTargetMetadata    = 6
	keyConsumerGroupTargetMember      = 7
	keyConsumerGroupCurrentAssignment = 8
)

// Kafka's MemberState values in ConsumerGroupCurrentMemberAssignment.
const (
	kafkaStateStable     int8 = 1
	kafkaStateUnrevoked  int8 = 2
	kafkaStateUnreleased int8 = 3
)

// isConsumerKey says whether a key version is a consumer group record.
func isConsumerKey(version int16) bool {
	return version >= keyConsumerGroupMetadata && version <= keyConsumerGroupCurrentAssignment
}

// hasMember says whether a consumer group key version carries a member id.
func hasMember(version int16) bool {
	return version == keyConsumerGroupMemberMetadata || version == keyConsumerGroupTargetMember ||
		version == keyConsumerGroupCurrentAssignment
}

func encodeConsumerKey(version int16, group, member string) []byte {
	b := kbin.AppendInt16(nil, version)
	b = kbin.AppendString(b, group)
	if hasMember(version) {
		b = kbin.AppendString(b, member)
	}
	return b
}

// decodeConsumerKey reads a consumer group key whose version the caller
// checked.
func decodeConsumerKey(b []byte) (recordKey, error) {
	r := kbin.Reader{Src: b}
	k := recordKey{kind: kindConsumer, version: r.Int16()}
	k.group = r.String()
	if hasMember(k.version) {
		k.member = r.String()
	}
	if err := complete(&r); err != nil {
		return recordKey{}, fmt.Errorf("%w: consumer group key v%d: %v", ErrCorrupt, k.version, err)
	}
	return k, nil
}

// consumerMetadataValue is ConsumerGroupMetadataValue.
type consumerMetadataValue struct {
	epoch    int32
	metaHash uint64
}

// memberMetadataValue is ConsumerGroupMemberMetadataValue.
type memberMetadataValue struct {
	instanceID, rackID   *string
	clientID, clientHost string
	topics               []string
	regex                *string
	rebalanceTimeoutMs   int32
	assignor             *string
}

// topicIDPartitions is one TopicPartitions entry.
type topicIDPartitions struct {
	id         [16]byte
	partitions []int32
}

// currentAssignmentValue is ConsumerGroupCurrentMemberAssignmentValue.
type currentAssignmentValue struct {
	epoch, previousEpoch int32
	state                int8
	assigned, revoking   []topicIDPartitions
}

// partitionMetadataTopic is one topic of ConsumerGroupPartitionMetadataValue.
type partitionMetadataTopic struct {
	id         [16]byte
	name       string
	partitions int32
}

const consumerValueVersion = 0

func appendNoTags(b []byte) []byte { return kbin.AppendUvarint(b, 0) }

func encodeConsumerMetadata(v consumerMetadataValue) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = kbin.AppendInt32(b, v.epoch)
	b = kbin.AppendUvarint(b, 1) // one tagged field: MetadataHash
	b = kbin.AppendUvarint(b, 0)
	b = kbin.AppendUvarint(b, 8)
	return kbin.AppendInt64(b, int64(v.metaHash))
}

func encodePartitionMetadata(topics []partitionMetadataTopic) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = kbin.AppendCompactArrayLen(b, len(topics))
	for _, t := range topics {
		b = kbin.AppendUuid(b, t.id)
		b = kbin.AppendCompactString(b, t.name)
		b = kbin.AppendInt32(b, t.partitions)
		b = kbin.AppendCompactArrayLen(b, 0) // no partition racks
		b = appendNoTags(b)
	}
	return appendNoTags(b)
}

func encodeMemberMetadata(v memberMetadataValue) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = kbin.AppendCompactNullableString(b, v.instanceID)
	b = kbin.AppendCompactNullableString(b, v.rackID)
	b = kbin.AppendCompactString(b, v.clientID)
	b = kbin.AppendCompactString(b, v.clientHost)
	b = kbin.AppendCompactArrayLen(b, len(v.topics))
	for _, t := range v.topics {
		b = kbin.AppendCompactString(b, t)
	}
	b = kbin.AppendCompactNullableString(b, v.regex)
	b = kbin.AppendInt32(b, v.rebalanceTimeoutMs)
	b = kbin.AppendCompactNullableString(b, v.assignor)
	return appendNoTags(b)
}

func encodeTargetMetadata(epoch int32) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = kbin.AppendInt32(b, epoch)
	return appendNoTags(b)
}

func appendTopicPartitions(b []byte, tps []topicIDPartitions) []byte {
	b = kbin.AppendCompactArrayLen(b, len(tps))
	for _, tp := range tps {
		b = kbin.AppendUuid(b, tp.id)
		b = kbin.AppendCompactArrayLen(b, len(tp.partitions))
		for _, p := range tp.partitions {
			b = kbin.AppendInt32(b, p)
		}
		b = appendNoTags(b)
	}
	return b
}

func encodeTargetMember(tps []topicIDPartitions) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = appendTopicPartitions(b, tps)
	return appendNoTags(b)
}

func encodeCurrentAssignment(v currentAssignmentValue) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = kbin.AppendInt32(b, v.epoch)
	b = kbin.AppendInt32(b, v.previousEpoch)
	b = kbin.AppendInt8(b, v.state)
	b = appendTopicPartitions(b, v.assigned)
	b = appendTopicPartitions(b, v.revoking)
	return appendNoTags(b)
}

// valueReader reads a consumer group value: it checks the version and
// collects the tagged fields a caller asks for.
type valueReader struct {
	kbin.Reader
	what string
}

func newValueReader(b []byte, what string) (*valueReader, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: %s value of %d bytes", ErrCorrupt, what, len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != consumerValueVersion {
		return nil, fmt.Errorf("%w: %s value version %d", ErrCorrupt, what, v)
	}
	return &valueReader{Reader: kbin.Reader{Src: b[2:]}, what: what}, nil
}

// tags reads a tagged field section, calling f for each field with its
// bytes; unknown tags are skipped.
func (r *valueReader) tags(f func(tag uint32, data []byte)) {
	n := r.Uvarint()
	for i := uint32(0); i < n && r.Ok(); i++ {
		tag, size := r.Uvarint(), r.Uvarint()
		data := r.Span(int(size))
		if f != nil && r.Ok() {
			f(tag, data)
		}
	}
}

// complete says whether a reader read all of its input and nothing past it.
func complete(r *kbin.Reader) error {
	if err := r.Complete(); err != nil {
		return err
	}
	if len(r.Src) > 0 {
		return fmt.Errorf("%d trailing bytes", len(r.Src))
	}
	return nil
}

func (r *valueReader) done() error {
	if err := complete(&r.Reader); err != nil {
		return fmt.Errorf("%w: %s value: %v", ErrCorrupt, r.what, err)
	}
	return nil
}

func (r *valueReader) topicPartitions() []topicIDPartitions {
	n := r.CompactArrayLen()
	if n <= 0 {
		return nil
	}
	out := make([]topicIDPartitions, 0, n)
	for i := int32(0); i < n && r.Ok(); i++ {
		tp := topicIDPartitions{id: r.Uuid()}
		np := r.CompactArrayLen()
		for j := int32(0); j < np && r.Ok(); j++ {
			tp.partitions = append(tp.partitions, r.Int32())
		}
		r.tags(nil)
		out = append(out, tp)
	}
	return out
}

func decodeConsumerMetadata(b []byte) (consumerMetadataValue, error) {
	r, err := newValueReader(b, "consumer group metadata")
	if err != nil {
		return consumerMetadataValue{}, err
	}
	v := consumerMetadataValue{epoch: r.Int32()}
	r.tags(func(tag uint32, data []byte) {
		if tag == 0 && len(data) == 8 {
			v.metaHash = binary.BigEndian.Uint64(data)
		}
	})
	return v, r.done()
}

func decodeMemberMetadata(b []byte) (memberMetadataValue, error) {
	r, err := newValueReader(b, "consumer group member metadata")
	if err != nil {
		return memberMetadataValue{}, err
	}
	var v memberMetadataValue
	v.instanceID, v.rackID = r.CompactNullableString(), r.CompactNullableString()
	v.clientID, v.clientHost = r.CompactString(), r.CompactString()
	n := r.CompactArrayLen()
	for i := int32(0); i < n && r.Ok(); i++ {
		v.topics = append(v.topics, r.CompactString())
	}
	v.regex = r.CompactNullableString()
	v.rebalanceTimeoutMs = r.Int32()
	v.assignor = r.CompactNullableString()
	r.tags(nil)
	return v, r.done()
}

func decodeTargetMetadata(b []byte) (int32, error) {
	r, err := newValueReader(b, "consumer group target assignment metadata")
	if err != nil {
		return 0, err
	}
	epoch := r.Int32()
	r.tags(nil)
	return epoch, r.done()
}

func decodeTargetMember(b []byte) ([]topicIDPartitions, error) {
	r, err := newValueReader(b, "consumer group target assignment member")
	if err != nil {
		return nil, err
	}
	tps := r.topicPartitions()
	r.tags(nil)
	return tps, r.done()
}

func decodeCurrentAssignment(b []byte) (currentAssignmentValue, error) {
	r, err := newValueReader(b, "consumer group current member assignment")
	if err != nil {
		return currentAssignmentValue{}, err
	}
	v := currentAssignmentValue{epoch: r.Int32(), previousEpoch: r.Int32(), state: r.Int8()}
	v.assigned = r.topicPartitions()
	v.revoking = r.topicPartitions()
	r.tags(nil)
	return v, r.done()
}

func decodePartitionMetadata(b []byte) ([]partitionMetadataTopic, error) {
	r, err := newValueReader(b, "consumer group partition metadata")
	if err != nil {
		return nil, err
	}
	var out []partitionMetadataTopic
	n := r.CompactArrayLen()
	for i := int32(0); i < n && r.Ok(); i++ {
		t := partitionMetadataTopic{id: r.Uuid(), name: r.CompactString(), partitions: r.Int32()}
		np := r.CompactArrayLen()
		for j := int32(0); j < np && r.Ok(); j++ {
			r.Int32()
			nr := r.CompactArrayLen()
			for k := int32(0); k < nr && r.Ok(); k++ {
				r.CompactString()
			}
			r.tags(nil)
		}
		r.tags(nil)
		out = append(out, t)
	}
	r.tags(nil)
	return out, r.done()
}

// decodeConsumerValue checks that a consumer group value parses as its key
// version says.
func decodeConsumerValue(version int16, b []byte) error {
	var err error
	switch version {
	case keyConsumerGroupMetadata:
		_, err = decodeConsumerMetadata(b)
	case keyConsumerGroupPartitionMetadata:
		_, err = decodePartitionMetadata(b)
	case keyConsumerGroupMemberMetadata:
		_, err = decodeMemberMetadata(b)
	case keyConsumerGroupTargetMetadata:
		_, err = decodeTargetMetadata(b)
	case keyConsumerGroupTargetMember:
		_, err = decodeTargetMember(b)
	case keyConsumerGroupCurrentAssignment:
		_, err = decodeCurrentAssignment(b)
	}
	return err
}
