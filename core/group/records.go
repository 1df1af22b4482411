package group

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/record"
)

// The record schemas of __consumer_offsets are Apache Kafka's: a key starts
// with its int16 version, which also says what the record is.
const (
	keyOffsetCommitV0  = 0
	keyOffsetCommitV1  = 1
	keyGroupMetadataV2 = 2
	// Versions 3 to 8 are the records of consumer (KIP-848) groups
	// (consumer_records.go), 17 to 24 those of streams groups
	// (streams_records.go); the others, of share groups, are skipped.

	// offsetValueVersion is written for every commit: v3 carries the leader
	// epoch, as Kafka 2.1 and later write.
	offsetValueVersion = 3
	// groupValueVersion is v3, the version with static member instance ids.
	groupValueVersion = 3
	// maxValueVersion is the newest value version either schema knows.
	maxValueVersion = 4
)

// TopicPartition names a partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Offset is a committed offset of a group.
type Offset struct {
	Offset      int64
	LeaderEpoch int32 // -1 when the committer did not know it
	Metadata    string
	// CommitTime is when the commit was made, in Unix milliseconds.
	CommitTime int64
	// ExpireTime is the expiry asked for by an old client (value v1), or -1.
	ExpireTime int64
}

// recordKind says what a __consumer_offsets record holds.
type recordKind int

const (
	kindOffset recordKind = iota
	kindGroup
	kindConsumer // a consumer (KIP-848) group record, versions 3 to 8
	kindStreams  // a streams (KIP-1071) group record, versions 17 to 24
	kindOther    // a key version this coordinator does not interpret
)

// recordKey is a decoded key.
type recordKey struct {
	kind    recordKind
	version int16
	group   string
	member  string // consumer and streams group member records
	tp      TopicPartition
}

func encodeOffsetKey(group string, tp TopicPartition) []byte {
	k := kmsg.OffsetCommitKey{Version: keyOffsetCommitV1, Group: group, Topic: tp.Topic, Partition: tp.Partition}
	return k.AppendTo(nil)
}

func encodeOffsetValue(o Offset) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Version = offsetValueVersion
	v.Offset, v.LeaderEpoch, v.Metadata, v.CommitTimestamp = o.Offset, o.LeaderEpoch, o.Metadata, o.CommitTime
	if o.ExpireTime >= 0 {
		v.Version, v.ExpireTimestamp = 1, o.ExpireTime
	}
	return v.AppendTo(nil)
}

func encodeGroupKey(group string) []byte {
	k := kmsg.GroupMetadataKey{Version: keyGroupMetadataV2, Group: group}
	return k.AppendTo(nil)
}

func encodeGroupValue(v *kmsg.GroupMetadataValue) []byte {
	v.Version = groupValueVersion
	return v.AppendTo(nil)
}

// decodeKey reads a record key. A key too short to hold a version, or one
// that does not parse as its version says, is ErrCorrupt.
func decodeKey(b []byte) (recordKey, error) {
	if len(b) < 2 {
		return recordKey{}, fmt.Errorf("%w: key of %d bytes", ErrCorrupt, len(b))
	}
	version := int16(binary.BigEndian.Uint16(b))
	switch version {
	case keyOffsetCommitV0, keyOffsetCommitV1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(b); err != nil {
			return recordKey{}, fmt.Errorf("%w: offset commit key: %v", ErrCorrupt, err)
		}
		return recordKey{kind: kindOffset, version: version, group: k.Group,
			tp: TopicPartition{Topic: k.Topic, Partition: k.Partition}}, nil
	case keyGroupMetadataV2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(b); err != nil {
			return recordKey{}, fmt.Errorf("%w: group metadata key: %v", ErrCorrupt, err)
		}
		return recordKey{kind: kindGroup, version: version, group: k.Group}, nil
	}
	if isConsumerKey(version) {
		return decodeConsumerKey(b)
	}
	if isStreamsKey(version) {
		return decodeStreamsKey(b)
	}
	if version < 0 {
		return recordKey{}, fmt.Errorf("%w: key version %d", ErrCorrupt, version)
	}
	return recordKey{kind: kindOther, version: version}, nil
}

func valueVersion(b []byte, what string) error {
	if len(b) < 2 {
		return fmt.Errorf("%w: %s value of %d bytes", ErrCorrupt, what, len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v < 0 || v > maxValueVersion {
		return fmt.Errorf("%w: %s value version %d", ErrCorrupt, what, v)
	}
	return nil
}

func decodeOffsetValue(b []byte) (Offset, error) {
	if err := valueVersion(b, "offset commit"); err != nil {
		return Offset{}, err
	}
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(b); err != nil {
		return Offset{}, fmt.Errorf("%w: offset commit value: %v", ErrCorrupt, err)
	}
	o := Offset{Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTime: v.CommitTimestamp, ExpireTime: -1}
	if v.Version >= 3 {
		o.LeaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 {
		o.ExpireTime = v.ExpireTimestamp
	}
	return o, nil
}

func decodeGroupValue(b []byte) (*kmsg.GroupMetadataValue, error) {
	if err := valueVersion(b, "group metadata"); err != nil {
		return nil, err
	}
	v := new(kmsg.GroupMetadataValue)
	if err := v.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("%w: group metadata value: %v", ErrCorrupt, err)
	}
	return v, nil
}

// maxBatchBytes keeps each written batch well under the default
// max.message.bytes; a larger change is split into several batches that are
// appended together.
const maxBatchBytes = 900 << 10

// kv is one record to write; a nil value is a tombstone.
type kv struct{ key, value []byte }

// encodeBatches builds v2 batches holding recs, timestamped now.
func encodeBatches(now time.Time, recs []kv) ([]byte, error) {
	var out []byte
	var cur []record.Record
	size := 0
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		b, err := record.Encode(record.BatchSpec{
			FirstTimestamp: now.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		}, cur)
		if err != nil {
			return fmt.Errorf("group: encode records: %w", err)
		}
		out = append(out, b...)
		cur, size = cur[:0], 0
		return nil
	}
	for _, r := range recs {
		n := len(r.key) + len(r.value) + 32
		if size+n > maxBatchBytes {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		cur = append(cur, record.Record{Key: r.key, Value: r.value})
		size += n
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}
