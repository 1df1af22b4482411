package group

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The records of streams (KIP-1071) groups in __consumer_offsets are Apache
// Kafka 4.x's (group-coordinator/src/main/resources/common/message/
// StreamsGroup*.json), encoded as consumer_records.go describes: the key's
// int16 version is the record type, then its fields in the non-flexible
// encoding; the value is an int16 version 0 and its fields in the flexible
// encoding.
//
//	17 StreamsGroupMetadata          key GroupId           value Epoch int32, tag 0 MetadataHash int64,
//	                                                        tag 1000 the standby replicas of the target assignment int32
//	19 StreamsGroupMemberMetadata    key GroupId, MemberId value InstanceId string?, RackId string?, ClientId string,
//	                                                        ClientHost string, RebalanceTimeoutMs int32,
//	                                                        TopologyEpoch int32, ProcessId string,
//	                                                        UserEndpoint {Host string, Port uint16}?,
//	                                                        ClientTags [Key string, Value string]
//	20 StreamsGroupTargetAssignmentMetadata key GroupId    value AssignmentEpoch int32
//	21 StreamsGroupTargetAssignmentMember   key GroupId, MemberId value ActiveTasks, StandbyTasks, WarmupTasks [TaskIds]
//	22 StreamsGroupCurrentMemberAssignment  key GroupId, MemberId value MemberEpoch int32, PreviousMemberEpoch int32,
//	                                                        State int8, ActiveTasks, StandbyTasks, WarmupTasks,
//	                                                        ActiveTasksPendingRevocation, StandbyTasksPendingRevocation,
//	                                                        WarmupTasksPendingRevocation [TaskIds]
//	23 StreamsGroupTopology          key GroupId           value Epoch int32, Subtopologies [SubtopologyId string,
//	                                                        SourceTopics [string], SourceTopicRegex [string],
//	                                                        StateChangelogTopics [TopicInfo], RepartitionSinkTopics [string],
//	                                                        RepartitionSourceTopics [TopicInfo],
//	                                                        CopartitionGroups [SourceTopics [int16], SourceTopicRegex [int16],
//	                                                        RepartitionSourceTopics [int16]]]
//
// TaskIds is [SubtopologyId string, Partitions [int32]]; TopicInfo is [Name
// string, Partitions int32, ReplicationFactor int16, TopicConfigs [key
// string, value string]]. Gregor does not write record 18 (partition
// metadata, replaced by the metadata hash) nor 24 (resolved topic ids); it
// skips them, and every tagged field it does not know, when reading. As for
// consumer groups, the MetadataHash is Gregor's own fingerprint. Tagged
// fields must be written in ascending tag order.
const (
	keyStreamsGroupMetadata          = 17
	keyStreamsGroupPartitionMetadata = 18
	keyStreamsGroupMemberMetadata    = 19
	keyStreamsGroupTargetMetadata    = 20
	keyStreamsGroupTargetMember      = 21
	keyStreamsGroupCurrentAssignment = 22
	keyStreamsGroupTopology          = 23
	keyStreamsGroupResolvedTopicIDs  = 24

	// streamsStandbyReplicasTag is Gregor's tagged field of the streams
	// group metadata: the streams.num.standby.replicas the target assignment
	// was computed with, so that a restart does not take the setting for a
	// change. Its tag is far from Kafka's.
	streamsStandbyReplicasTag = 1000
)

// isStreamsKey says whether a key version is a streams group record.
func isStreamsKey(version int16) bool {
	return version >= keyStreamsGroupMetadata && version <= keyStreamsGroupResolvedTopicIDs
}

func streamsKeyHasMember(version int16) bool {
	return version == keyStreamsGroupMemberMetadata || version == keyStreamsGroupTargetMember ||
		version == keyStreamsGroupCurrentAssignment
}

func encodeStreamsKey(version int16, group, member string) []byte {
	b := kbin.AppendInt16(nil, version)
	b = kbin.AppendString(b, group)
	if streamsKeyHasMember(version) {
		b = kbin.AppendString(b, member)
	}
	return b
}

func decodeStreamsKey(b []byte) (recordKey, error) {
	r := kbin.Reader{Src: b}
	k := recordKey{kind: kindStreams, version: r.Int16()}
	k.group = r.String()
	if streamsKeyHasMember(k.version) {
		k.member = r.String()
	}
	if err := complete(&r); err != nil {
		return recordKey{}, fmt.Errorf("%w: streams group key v%d: %v", ErrCorrupt, k.version, err)
	}
	return k, nil
}

// streamsMemberValue is StreamsGroupMemberMetadataValue.
type streamsMemberValue struct {
	instanceID, rackID   *string
	clientID, clientHost string
	rebalanceTimeoutMs   int32
	topologyEpoch        int32
	processID            string
	endpoint             *StreamsEndpoint
	clientTags           map[string]string
}

// streamsCurrentValue is StreamsGroupCurrentMemberAssignmentValue.
type streamsCurrentValue struct {
	epoch, previousEpoch int32
	state                int8
	assigned, revoking   streamsTasks
}

// streamsMetadataValue is StreamsGroupMetadataValue.
type streamsMetadataValue struct {
	epoch           int32
	metaHash        uint64
	standbyReplicas int32
}

func encodeStreamsMetadata(v streamsMetadataValue) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = kbin.AppendInt32(b, v.epoch)
	b = kbin.AppendUvarint(b, 2) // tagged fields: MetadataHash, the standby replicas
	b = kbin.AppendUvarint(b, 0)
	b = kbin.AppendUvarint(b, 8)
	b = kbin.AppendInt64(b, int64(v.metaHash))
	b = kbin.AppendUvarint(b, streamsStandbyReplicasTag)
	b = kbin.AppendUvarint(b, 4)
	return kbin.AppendInt32(b, v.standbyReplicas)
}

func appendCompactStrings(b []byte, ss []string) []byte {
	b = kbin.AppendCompactArrayLen(b, len(ss))
	for _, s := range ss {
		b = kbin.AppendCompactString(b, s)
	}
	return b
}

// appendKeyValues writes a map as [Key, Value] sorted by key, so that equal
// maps encode equally.
func appendKeyValues(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = kbin.AppendCompactArrayLen(b, len(keys))
	for _, k := range keys {
		b = kbin.AppendCompactString(b, k)
		b = kbin.AppendCompactString(b, m[k])
		b = appendNoTags(b)
	}
	return b
}

func encodeStreamsMember(v streamsMemberValue) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = kbin.AppendCompactNullableString(b, v.instanceID)
	b = kbin.AppendCompactNullableString(b, v.rackID)
	b = kbin.AppendCompactString(b, v.clientID)
	b = kbin.AppendCompactString(b, v.clientHost)
	b = kbin.AppendInt32(b, v.rebalanceTimeoutMs)
	b = kbin.AppendInt32(b, v.topologyEpoch)
	b = kbin.AppendCompactString(b, v.processID)
	if v.endpoint == nil {
		b = kbin.AppendInt8(b, -1)
	} else {
		b = kbin.AppendInt8(b, 1)
		b = kbin.AppendCompactString(b, v.endpoint.Host)
		b = kbin.AppendUint16(b, v.endpoint.Port)
		b = appendNoTags(b)
	}
	b = appendKeyValues(b, v.clientTags)
	return appendNoTags(b)
}

// appendTaskIDs writes a task set as [TaskIds] sorted by subtopology.
func appendTaskIDs(b []byte, s taskSet) []byte {
	ids := taskIDs(s)
	b = kbin.AppendCompactArrayLen(b, len(ids))
	for _, id := range ids {
		b = kbin.AppendCompactString(b, id.Subtopology)
		b = kbin.AppendCompactArrayLen(b, len(id.Partitions))
		for _, p := range id.Partitions {
			b = kbin.AppendInt32(b, p)
		}
		b = appendNoTags(b)
	}
	return b
}

func encodeStreamsTarget(t streamsTasks) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = appendTaskIDs(b, t.active)
	b = appendTaskIDs(b, t.standby)
	b = appendTaskIDs(b, t.warmup)
	return appendNoTags(b)
}

func encodeStreamsCurrent(v streamsCurrentValue) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = kbin.AppendInt32(b, v.epoch)
	b = kbin.AppendInt32(b, v.previousEpoch)
	b = kbin.AppendInt8(b, v.state)
	for _, s := range []taskSet{v.assigned.active, v.assigned.standby, v.assigned.warmup,
		v.revoking.active, v.revoking.standby, v.revoking.warmup} {
		b = appendTaskIDs(b, s)
	}
	return appendNoTags(b)
}

func appendTopicInfos(b []byte, tis []StreamsTopicInfo) []byte {
	b = kbin.AppendCompactArrayLen(b, len(tis))
	for _, ti := range tis {
		b = kbin.AppendCompactString(b, ti.Name)
		b = kbin.AppendInt32(b, ti.Partitions)
		b = kbin.AppendInt16(b, ti.ReplicationFactor)
		b = appendKeyValues(b, ti.Configs)
		b = appendNoTags(b)
	}
	return b
}

func appendInt16s(b []byte, vs []int16) []byte {
	b = kbin.AppendCompactArrayLen(b, len(vs))
	for _, v := range vs {
		b = kbin.AppendInt16(b, v)
	}
	return b
}

func encodeStreamsTopology(t *StreamsTopology) []byte {
	b := kbin.AppendInt16(nil, consumerValueVersion)
	b = kbin.AppendInt32(b, t.Epoch)
	b = kbin.AppendCompactArrayLen(b, len(t.Subtopologies))
	for _, st := range t.Subtopologies {
		b = kbin.AppendCompactString(b, st.ID)
		b = appendCompactStrings(b, st.SourceTopics)
		b = appendCompactStrings(b, st.SourceTopicRegex)
		b = appendTopicInfos(b, st.StateChangelogTopics)
		b = appendCompactStrings(b, st.RepartitionSinkTopics)
		b = appendTopicInfos(b, st.RepartitionSourceTopics)
		b = kbin.AppendCompactArrayLen(b, len(st.CopartitionGroups))
		for _, g := range st.CopartitionGroups {
			b = appendInt16s(b, g.SourceTopics)
			b = appendInt16s(b, g.SourceTopicRegex)
			b = appendInt16s(b, g.RepartitionSourceTopics)
			b = appendNoTags(b)
		}
		b = appendNoTags(b)
	}
	return appendNoTags(b)
}

func (r *valueReader) strings() []string {
	n := r.CompactArrayLen()
	var out []string
	for i := int32(0); i < n && r.Ok(); i++ {
		out = append(out, r.CompactString())
	}
	return out
}

func (r *valueReader) keyValues() map[string]string {
	n := r.CompactArrayLen()
	if n <= 0 {
		return nil
	}
	out := make(map[string]string, n)
	for i := int32(0); i < n && r.Ok(); i++ {
		k := r.CompactString()
		out[k] = r.CompactString()
		r.tags(nil)
	}
	return out
}

func (r *valueReader) taskSet() taskSet {
	s := taskSet{}
	n := r.CompactArrayLen()
	for i := int32(0); i < n && r.Ok(); i++ {
		st := r.CompactString()
		np := r.CompactArrayLen()
		for j := int32(0); j < np && r.Ok(); j++ {
			s[streamsTask{st, r.Int32()}] = true
		}
		r.tags(nil)
	}
	return s
}

func (r *valueReader) tasks() streamsTasks {
	return streamsTasks{active: r.taskSet(), standby: r.taskSet(), warmup: r.taskSet()}
}

func (r *valueReader) topicInfos() []StreamsTopicInfo {
	n := r.CompactArrayLen()
	var out []StreamsTopicInfo
	for i := int32(0); i < n && r.Ok(); i++ {
		ti := StreamsTopicInfo{Name: r.CompactString(), Partitions: r.Int32(), ReplicationFactor: r.Int16()}
		ti.Configs = r.keyValues()
		r.tags(nil)
		out = append(out, ti)
	}
	return out
}

func (r *valueReader) int16s() []int16 {
	n := r.CompactArrayLen()
	var out []int16
	for i := int32(0); i < n && r.Ok(); i++ {
		out = append(out, r.Int16())
	}
	return out
}

func decodeStreamsMetadata(b []byte) (streamsMetadataValue, error) {
	r, err := newValueReader(b, "streams group metadata")
	if err != nil {
		return streamsMetadataValue{}, err
	}
	v := streamsMetadataValue{epoch: r.Int32()}
	r.tags(func(tag uint32, data []byte) {
		switch {
		case tag == 0 && len(data) == 8:
			v.metaHash = binary.BigEndian.Uint64(data)
		case tag == streamsStandbyReplicasTag && len(data) == 4:
			v.standbyReplicas = int32(binary.BigEndian.Uint32(data))
		}
	})
	return v, r.done()
}

func decodeStreamsMember(b []byte) (streamsMemberValue, error) {
	r, err := newValueReader(b, "streams group member metadata")
	if err != nil {
		return streamsMemberValue{}, err
	}
	var v streamsMemberValue
	v.instanceID, v.rackID = r.CompactNullableString(), r.CompactNullableString()
	v.clientID, v.clientHost = r.CompactString(), r.CompactString()
	v.rebalanceTimeoutMs, v.topologyEpoch = r.Int32(), r.Int32()
	v.processID = r.CompactString()
	if r.Int8() >= 0 {
		ep := StreamsEndpoint{Host: r.CompactString(), Port: r.Uint16()}
		r.tags(nil)
		v.endpoint = &ep
	}
	v.clientTags = r.keyValues()
	r.tags(nil)
	return v, r.done()
}

func decodeStreamsTargetMetadata(b []byte) (int32, error) {
	return decodeTargetMetadata(b)
}

func decodeStreamsTarget(b []byte) (streamsTasks, error) {
	r, err := newValueReader(b, "streams group target assignment member")
	if err != nil {
		return streamsTasks{}, err
	}
	t := r.tasks()
	r.tags(nil)
	return t, r.done()
}

func decodeStreamsCurrent(b []byte) (streamsCurrentValue, error) {
	r, err := newValueReader(b, "streams group current member assignment")
	if err != nil {
		return streamsCurrentValue{}, err
	}
	v := streamsCurrentValue{epoch: r.Int32(), previousEpoch: r.Int32(), state: r.Int8()}
	v.assigned, v.revoking = r.tasks(), r.tasks()
	r.tags(nil)
	return v, r.done()
}

func decodeStreamsTopology(b []byte) (*StreamsTopology, error) {
	r, err := newValueReader(b, "streams group topology")
	if err != nil {
		return nil, err
	}
	t := &StreamsTopology{Epoch: r.Int32()}
	n := r.CompactArrayLen()
	for i := int32(0); i < n && r.Ok(); i++ {
		st := StreamsSubtopology{ID: r.CompactString(), SourceTopics: r.strings(), SourceTopicRegex: r.strings(),
			StateChangelogTopics: r.topicInfos(), RepartitionSinkTopics: r.strings(), RepartitionSourceTopics: r.topicInfos()}
		ng := r.CompactArrayLen()
		for j := int32(0); j < ng && r.Ok(); j++ {
			st.CopartitionGroups = append(st.CopartitionGroups, StreamsCopartitionGroup{
				SourceTopics: r.int16s(), SourceTopicRegex: r.int16s(), RepartitionSourceTopics: r.int16s()})
			r.tags(nil)
		}
		r.tags(nil)
		t.Subtopologies = append(t.Subtopologies, st)
	}
	r.tags(nil)
	return t, r.done()
}

// decodeStreamsValue checks that a streams group value parses as its key
// version says; records Gregor does not write are only checked for their
// value version.
func decodeStreamsValue(version int16, b []byte) error {
	var err error
	switch version {
	case keyStreamsGroupMetadata:
		_, err = decodeStreamsMetadata(b)
	case keyStreamsGroupMemberMetadata:
		_, err = decodeStreamsMember(b)
	case keyStreamsGroupTargetMetadata:
		_, err = decodeStreamsTargetMetadata(b)
	case keyStreamsGroupTargetMember:
		_, err = decodeStreamsTarget(b)
	case keyStreamsGroupCurrentAssignment:
		_, err = decodeStreamsCurrent(b)
	case keyStreamsGroupTopology:
		_, err = decodeStreamsTopology(b)
	default:
		if len(b) < 2 || binary.BigEndian.Uint16(b) != consumerValueVersion {
			err = fmt.Errorf("%w: streams group record %d: value of %d bytes", ErrCorrupt, version, len(b))
		}
	}
	return err
}
