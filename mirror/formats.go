package mirror

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The bookkeeping records use MirrorMaker 2's formats (Kafka's protocol
// struct encoding: big-endian integers, strings as an int16 length and
// UTF-8 bytes), so that tools written for MirrorMaker 2, such as Kafka's
// RemoteClusterUtils, read Gregor's checkpoints and heartbeats.

// ErrCorruptRecord is wrapped by every error decoding a bookkeeping record.
var ErrCorruptRecord = errors.New("corrupt mirror record")

// formatVersion is the version in the value header of checkpoints and
// heartbeats.
const formatVersion int16 = 0

// OffsetSync says that the source record at Upstream was written at target
// offset Downstream. Key {topic string, partition int32}, value {upstream
// int64, downstream int64}.
type OffsetSync struct {
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64
}

// Checkpoint is a group's committed source offset and its translation. Key
// {group string, topic string, partition int32}, value {version int16,
// upstream int64, downstream int64, metadata string}.
type Checkpoint struct {
	Group      string
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64
	Metadata   string
}

// Heartbeat is written periodically by a mirror. Key {source string, target
// string}, value {version int16, timestamp int64}.
type Heartbeat struct {
	Source    string
	Target    string
	Timestamp int64
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendInt16(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }
func appendInt32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendInt64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// reader decodes the struct encoding; the first error sticks.
type reader struct {
	b    []byte
	what string
	err  error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("mirror: %s: %w: %s", r.what, ErrCorruptRecord, fmt.Sprintf(format, args...))
	}
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.fail("need %d bytes, %d left", n, len(r.b))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) string() string {
	n := r.int16()
	if n < 0 {
		r.fail("negative string length %d", n)
		return ""
	}
	return string(r.take(int(n)))
}

// done fails on trailing bytes and returns the sticky error.
func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	return r.err
}

func (r *reader) version() {
	if v := r.int16(); r.err == nil && v != formatVersion {
		r.fail("unknown version %d", v)
	}
}

// checkString refuses strings the int16 length cannot carry.
func checkString(what, s string) error {
	if len(s) > math.MaxInt16 {
		return fmt.Errorf("mirror: %s of %d bytes is too long", what, len(s))
	}
	return nil
}

// Key encodes the sync's key.
func (s OffsetSync) Key() []byte {
	return appendInt32(appendString(nil, s.Topic), s.Partition)
}

// Value encodes the sync's value.
func (s OffsetSync) Value() []byte {
	return appendInt64(appendInt64(make([]byte, 0, 16), s.Upstream), s.Downstream)
}

// DecodeOffsetSync decodes an offset sync record.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	k := reader{b: key, what: "offset sync key"}
	s := OffsetSync{Topic: k.string(), Partition: k.int32()}
	if err := k.done(); err != nil {
		return OffsetSync{}, err
	}
	v := reader{b: value, what: "offset sync value"}
	s.Upstream, s.Downstream = v.int64(), v.int64()
	if err := v.done(); err != nil {
		return OffsetSync{}, err
	}
	return s, nil
}

// Key encodes the checkpoint's key.
func (c Checkpoint) Key() []byte {
	return appendInt32(appendString(appendString(nil, c.Group), c.Topic), c.Partition)
}

// Value encodes the checkpoint's value.
func (c Checkpoint) Value() []byte {
	b := appendInt16(nil, formatVersion)
	b = appendInt64(appendInt64(b, c.Upstream), c.Downstream)
	return appendString(b, c.Metadata)
}

// DecodeCheckpoint decodes a checkpoint record.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	k := reader{b: key, what: "checkpoint key"}
	c := Checkpoint{Group: k.string(), Topic: k.string(), Partition: k.int32()}
	if err := k.done(); err != nil {
		return Checkpoint{}, err
	}
	v := reader{b: value, what: "checkpoint value"}
	v.version()
	c.Upstream, c.Downstream, c.Metadata = v.int64(), v.int64(), v.string()
	if err := v.done(); err != nil {
		return Checkpoint{}, err
	}
	return c, nil
}

// Key encodes the heartbeat's key.
func (h Heartbeat) Key() []byte {
	return appendString(appendString(nil, h.Source), h.Target)
}

// Value encodes the heartbeat's value.
func (h Heartbeat) Value() []byte {
	return appendInt64(appendInt16(nil, formatVersion), h.Timestamp)
}

// DecodeHeartbeat decodes a heartbeat record.
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	k := reader{b: key, what: "heartbeat key"}
	h := Heartbeat{Source: k.string(), Target: k.string()}
	if err := k.done(); err != nil {
		return Heartbeat{}, err
	}
	v := reader{b: value, what: "heartbeat value"}
	v.version()
	h.Timestamp = v.int64()
	if err := v.done(); err != nil {
		return Heartbeat{}, err
	}
	return h, nil
}
