package share

import (
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kbin"
)

// Share group records of __consumer_offsets, in Kafka's formats: the key
// starts with its record type (Kafka's coordinator record api key), then
// the key fields unflexibly encoded; the value starts with its version
// (0), then the fields flexibly encoded.
const (
	recordGroupMember     int16 = 10 // ShareGroupMemberMetadata
	recordGroupMetadata   int16 = 11 // ShareGroupMetadata
	recordGroupAssignment int16 = 14 // ShareGroupCurrentMemberAssignment
)

// memberStable is Kafka's MemberState STABLE, the state a share group
// member's current assignment is written in.
const memberStable int8 = 0

// GroupRecordKey is a decoded share group record key.
type GroupRecordKey struct {
	Type     int16 // 10 member metadata, 11 group metadata, 14 assignment
	Group    string
	MemberID string
}

// EncodeGroupMetadataKey is ShareGroupMetadataKey.
func EncodeGroupMetadataKey(group string) []byte {
	return kbin.AppendString(kbin.AppendInt16(nil, recordGroupMetadata), group)
}

// EncodeGroupMetadataValue is ShareGroupMetadataValue: the group epoch.
func EncodeGroupMetadataValue(epoch int32) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, epoch)
	b = kbin.AppendInt64(b, 0) // MetadataHash: not kept
	return kbin.AppendUvarint(b, 0)
}

// EncodeMemberKey is ShareGroupMemberMetadataKey.
func EncodeMemberKey(group, member string) []byte {
	return kbin.AppendString(kbin.AppendString(kbin.AppendInt16(nil, recordGroupMember), group), member)
}

// EncodeAssignmentKey is ShareGroupCurrentMemberAssignmentKey.
func EncodeAssignmentKey(group, member string) []byte {
	return kbin.AppendString(kbin.AppendString(kbin.AppendInt16(nil, recordGroupAssignment), group), member)
}

// EncodeMemberValue is ShareGroupMemberMetadataValue.
func EncodeMemberValue(m Member) []byte {
	b := kbin.AppendInt16(nil, 0)
	var rack *string
	if m.RackID != "" {
		rack = &m.RackID
	}
	b = kbin.AppendCompactNullableString(b, rack)
	b = kbin.AppendCompactString(b, m.ClientID)
	b = kbin.AppendCompactString(b, m.ClientHost)
	b = kbin.AppendCompactArrayLen(b, len(m.Subscribed))
	for _, t := range m.Subscribed {
		b = kbin.AppendCompactString(b, t)
	}
	return kbin.AppendUvarint(b, 0)
}

// EncodeAssignmentValue is ShareGroupCurrentMemberAssignmentValue; ids
// gives the topic ids of the assigned topics.
func EncodeAssignmentValue(m Member, ids map[string][16]byte) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, m.MemberEpoch)
	b = kbin.AppendInt32(b, m.MemberEpoch) // PreviousMemberEpoch
	b = kbin.AppendInt8(b, memberStable)
	var topics []string
	for t := range m.Assignment {
		if _, ok := ids[t]; ok {
			topics = append(topics, t)
		}
	}
	sort.Strings(topics)
	b = kbin.AppendCompactArrayLen(b, len(topics))
	for _, t := range topics {
		b = kbin.AppendUuid(b, ids[t])
		ps := m.Assignment[t]
		b = kbin.AppendCompactArrayLen(b, len(ps))
		for _, p := range ps {
			b = kbin.AppendInt32(b, p)
		}
		b = kbin.AppendUvarint(b, 0)
	}
	return kbin.AppendUvarint(b, 0)
}

// DecodeGroupRecordKey reads a share group record key; ok is false for a
// key of another record.
func DecodeGroupRecordKey(key []byte) (k GroupRecordKey, ok bool, err error) {
	r := kbin.Reader{Src: key}
	k.Type = r.Int16()
	switch k.Type {
	case recordGroupMetadata:
		k.Group = r.String()
	case recordGroupMember, recordGroupAssignment:
		k.Group = r.String()
		k.MemberID = r.String()
	default:
		return k, false, nil
	}
	if err := r.Complete(); err != nil {
		return k, false, fmt.Errorf("%w: share group key: %w", ErrCorruptRecord, err)
	}
	return k, true, nil
}

func skipTags(r *kbin.Reader) {
	for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
		r.Uvarint()
		r.Span(int(r.Uvarint()))
	}
}

func valueReader(v []byte) (*kbin.Reader, error) {
	r := &kbin.Reader{Src: v}
	if ver := r.Int16(); !r.Ok() || ver != 0 {
		return nil, fmt.Errorf("%w: share group value version %d", ErrCorruptRecord, ver)
	}
	return r, nil
}

// DecodeGroupMetadataValue reads the group epoch of a ShareGroupMetadataValue.
func DecodeGroupMetadataValue(v []byte) (int32, error) {
	r, err := valueReader(v)
	if err != nil {
		return 0, err
	}
	epoch := r.Int32()
	r.Int64()
	skipTags(r)
	if err := r.Complete(); err != nil {
		return 0, fmt.Errorf("%w: share group metadata: %w", ErrCorruptRecord, err)
	}
	return epoch, nil
}

// DecodeMemberValue reads a ShareGroupMemberMetadataValue into m.
func DecodeMemberValue(v []byte, m *Member) error {
	r, err := valueReader(v)
	if err != nil {
		return err
	}
	if rack := r.CompactNullableString(); rack != nil {
		m.RackID = *rack
	}
	m.ClientID = r.CompactString()
	m.ClientHost = r.CompactString()
	n := r.CompactArrayLen()
	m.Subscribed = nil
	for i := int32(0); i < n && r.Ok(); i++ {
		m.Subscribed = append(m.Subscribed, r.CompactString())
	}
	skipTags(r)
	if err := r.Complete(); err != nil {
		return fmt.Errorf("%w: share group member: %w", ErrCorruptRecord, err)
	}
	return nil
}

// DecodeAssignmentValue reads a ShareGroupCurrentMemberAssignmentValue into
// m; names gives the names of topic ids (unknown ones are left out).
func DecodeAssignmentValue(v []byte, m *Member, names map[[16]byte]string) error {
	r, err := valueReader(v)
	if err != nil {
		return err
	}
	m.MemberEpoch = r.Int32()
	r.Int32()
	r.Int8()
	m.Assignment = map[string][]int32{}
	n := r.CompactArrayLen()
	for i := int32(0); i < n && r.Ok(); i++ {
		id := r.Uuid()
		np := r.CompactArrayLen()
		var ps []int32
		for j := int32(0); j < np && r.Ok(); j++ {
			ps = append(ps, r.Int32())
		}
		skipTags(r)
		if name, ok := names[id]; ok {
			m.Assignment[name] = ps
		}
	}
	skipTags(r)
	if err := r.Complete(); err != nil {
		return fmt.Errorf("%w: share group assignment: %w", ErrCorruptRecord, err)
	}
	return nil
}
