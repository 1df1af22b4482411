package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// HeaderSize is the size in bytes of a v2 batch header, up to and including the
// record count.
const HeaderSize = 61

// Byte positions of the header fields within a v2 batch.
const (
	posBaseOffset           = 0
	posLength               = 8
	posPartitionLeaderEpoch = 12
	posMagic                = 16
	posCRC                  = 17
	posAttributes           = 21
	posLastOffsetDelta      = 23
	posFirstTimestamp       = 27
	posMaxTimestamp         = 35
	posProducerID           = 43
	posProducerEpoch        = 51
	posBaseSequence         = 53
	posNumRecords           = 57

	// lengthOverhead is the bytes before and including the length field, which
	// the length itself does not count.
	lengthOverhead = 12
	// MinLength is the smallest legal value of a v2 batch's length field.
	MinLength = HeaderSize - lengthOverhead
)

// Attribute bits of a v2 batch.
const (
	attrCodecMask          = 0x07
	attrLogAppendTime      = 0x08
	attrTransactional      = 0x10
	attrControl            = 0x20
	attrDeleteHorizonSet   = 0x40
	currentMagic           = 2
	noSequence             = -1
	noPartitionLeaderEpoch = -1
)

// Codec is a batch compression codec, stored in attribute bits 0-2.
type Codec int8

// The codecs Kafka defines.
const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

// String returns Kafka's name for the codec.
func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// Errors returned by this package. ErrCorrupt is the class of every malformed
// batch; test with errors.Is.
var (
	// ErrCorrupt marks bytes that are not a well-formed v2 batch (bad length,
	// CRC mismatch, malformed records, undecodable compressed data).
	ErrCorrupt = errors.New("record: corrupt batch")
	// ErrTruncated marks a byte run that ends inside a batch.
	ErrTruncated = errors.New("record: truncated batch")
	// ErrUnsupportedMagic marks a batch whose magic byte is not 2.
	ErrUnsupportedMagic = errors.New("record: unsupported magic")
	// ErrTooLarge marks decompressed output over the caller's bound.
	ErrTooLarge = errors.New("record: decompressed batch too large")
)

// corruptf returns an ErrCorrupt-class error with a formatted message.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// Header is the decoded 61-byte header of a v2 batch.
type Header struct {
	BaseOffset           int64
	Length               int32 // the batchLength field: bytes after the length field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Codec returns the batch's compression codec.
func (h Header) Codec() Codec { return Codec(h.Attributes & attrCodecMask) }

// IsTransactional reports attribute bit 4.
func (h Header) IsTransactional() bool { return h.Attributes&attrTransactional != 0 }

// IsControl reports attribute bit 5.
func (h Header) IsControl() bool { return h.Attributes&attrControl != 0 }

// LogAppendTime reports attribute bit 3: timestamps are the broker's append time.
func (h Header) LogAppendTime() bool { return h.Attributes&attrLogAppendTime != 0 }

// LastOffset is the offset of the batch's last record.
func (h Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset after the batch's last record.
func (h Header) NextOffset() int64 { return h.LastOffset() + 1 }

// Size is the batch's total size in bytes.
func (h Header) Size() int { return int(h.Length) + lengthOverhead }

// LastSequence is the producer sequence of the batch's last record, wrapping
// past math.MaxInt32 to 0 as Kafka does; -1 when the batch has no sequence.
func (h Header) LastSequence() int32 {
	if h.BaseSequence == noSequence {
		return noSequence
	}
	return incrementSequence(h.BaseSequence, h.LastOffsetDelta)
}

// incrementSequence adds inc to seq, wrapping past MaxInt32 to zero.
func incrementSequence(seq, inc int32) int32 {
	if seq > math.MaxInt32-inc {
		return inc - (math.MaxInt32 - seq) - 1
	}
	return seq + inc
}

// ParseHeader decodes the header at the start of b without checking the CRC.
// It fails with ErrTruncated when b is shorter than HeaderSize and with
// ErrUnsupportedMagic when the magic byte is not 2.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		if len(b) > posMagic && int8(b[posMagic]) != currentMagic {
			return Header{}, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, int8(b[posMagic]))
		}
		return Header{}, fmt.Errorf("%w: %d bytes, a batch header needs %d", ErrTruncated, len(b), HeaderSize)
	}
	h := Header{
		BaseOffset:           int64(binary.BigEndian.Uint64(b[posBaseOffset:])),
		Length:               int32(binary.BigEndian.Uint32(b[posLength:])),
		PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(b[posPartitionLeaderEpoch:])),
		Magic:                int8(b[posMagic]),
		CRC:                  binary.BigEndian.Uint32(b[posCRC:]),
		Attributes:           int16(binary.BigEndian.Uint16(b[posAttributes:])),
		LastOffsetDelta:      int32(binary.BigEndian.Uint32(b[posLastOffsetDelta:])),
		FirstTimestamp:       int64(binary.BigEndian.Uint64(b[posFirstTimestamp:])),
		MaxTimestamp:         int64(binary.BigEndian.Uint64(b[posMaxTimestamp:])),
		ProducerID:           int64(binary.BigEndian.Uint64(b[posProducerID:])),
		ProducerEpoch:        int16(binary.BigEndian.Uint16(b[posProducerEpoch:])),
		BaseSequence:         int32(binary.BigEndian.Uint32(b[posBaseSequence:])),
		NumRecords:           int32(binary.BigEndian.Uint32(b[posNumRecords:])),
	}
	if h.Magic != currentMagic {
		return Header{}, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, h.Magic)
	}
	return h, nil
}

// BatchSize returns the length field of the batch starting b and the
// batch's total size it implies, without parsing or checking anything
// else. b must hold at least the first 12 bytes.
func BatchSize(b []byte) (length int32, size int) {
	length = int32(binary.BigEndian.Uint32(b[posLength:]))
	return length, int(length) + lengthOverhead
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum computes the CRC-32C of a v2 batch: the bytes from the attributes
// field to the end. b must hold at least HeaderSize bytes.
func Checksum(b []byte) uint32 { return crc32.Checksum(b[posAttributes:], castagnoli) }

// UpdateChecksum continues a CRC-32C computed by Checksum-style callers over
// further bytes, for checking a batch read in pieces.
func UpdateChecksum(crc uint32, p []byte) uint32 { return crc32.Update(crc, castagnoli, p) }

// CRCStart is the position in a batch where the CRC-covered bytes begin.
const CRCStart = posAttributes

// SetBaseOffset overwrites the batch's base offset in place. The CRC does not
// cover it.
func SetBaseOffset(b []byte, off int64) {
	binary.BigEndian.PutUint64(b[posBaseOffset:], uint64(off))
}

// SetPartitionLeaderEpoch overwrites the batch's partition leader epoch in place.
// The CRC does not cover it.
func SetPartitionLeaderEpoch(b []byte, epoch int32) {
	binary.BigEndian.PutUint32(b[posPartitionLeaderEpoch:], uint32(epoch))
}

// SetLogAppendTime marks the batch's timestamps as broker append time: it sets
// attribute bit 3 and MaxTimestamp to ts, then recomputes the CRC in place.
// b must be one whole batch.
func SetLogAppendTime(b []byte, ts int64) {
	attrs := binary.BigEndian.Uint16(b[posAttributes:]) | attrLogAppendTime
	binary.BigEndian.PutUint16(b[posAttributes:], attrs)
	binary.BigEndian.PutUint64(b[posMaxTimestamp:], uint64(ts))
	binary.BigEndian.PutUint32(b[posCRC:], Checksum(b))
}
