package group

import "unicode/utf16"

// OffsetsTopic is the internal topic holding offsets and group metadata.
const OffsetsTopic = "__consumer_offsets"

// PartitionFor is the __consumer_offsets partition of a group, as Kafka
// computes it: Utils.abs(groupId.hashCode) % partitions, with Java's String
// hash over UTF-16 code units. It is -1 when partitions is not positive.
func PartitionFor(groupID string, partitions int32) int32 {
	if partitions <= 0 {
		return -1
	}
	return javaAbs(javaStringHash(groupID)) % partitions
}

// javaStringHash is java.lang.String.hashCode.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaAbs is Kafka's Utils.abs: Math.abs, except that MIN_VALUE maps to 0.
func javaAbs(n int32) int32 {
	switch {
	case n == -1<<31:
		return 0
	case n < 0:
		return -n
	}
	return n
}
