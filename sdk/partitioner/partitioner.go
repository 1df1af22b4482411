// Package partitioner is the partitioner contract: given a record and a
// partition count, choose a partition. It also holds the Java-compatible
// murmur2 partitioner that Kafka clients use by default for keyed records.
package partitioner

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// Record is what a partitioner sees of a record.
type Record struct {
	Key     []byte // nil for a null key
	Value   []byte
	Headers []Header
}

// Partitioner chooses a partition in [0, numPartitions) for a record.
type Partitioner interface {
	Partition(r Record, numPartitions int32) int32
}

// Func adapts a function to the Partitioner interface.
type Func func(r Record, numPartitions int32) int32

// Partition calls f.
func (f Func) Partition(r Record, numPartitions int32) int32 { return f(r, numPartitions) }

// Murmur2 is the 32-bit murmur2 hash with the seed the Java client uses.
func Murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	for len(data) >= 4 {
		k := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16 | uint32(data[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
		data = data[4:]
	}
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// KeyPartition is Kafka's default placement of a keyed record:
// (murmur2(key) & 0x7fffffff) % numPartitions.
func KeyPartition(key []byte, numPartitions int32) int32 {
	if numPartitions <= 0 {
		return 0
	}
	return (Murmur2(key) & 0x7fffffff) % numPartitions
}

// RoundRobin places records with a null key in turn; keyed records go by
// KeyPartition. It is not safe for concurrent use.
type RoundRobin struct{ next int32 }

// Partition implements Partitioner.
func (p *RoundRobin) Partition(r Record, numPartitions int32) int32 {
	if r.Key != nil {
		return KeyPartition(r.Key, numPartitions)
	}
	if numPartitions <= 0 {
		return 0
	}
	part := p.next % numPartitions
	p.next = (p.next + 1) % numPartitions
	return part
}
