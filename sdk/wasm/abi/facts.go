package abi

import (
	"encoding/binary"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// PartitionSize is the encoded size of p.
func PartitionSize(p *retention.Partition) int {
	n := 4 + len(p.Topic) + 4 + 4*8 + 4 + 32*len(p.Segments) + 4
	for _, g := range p.Groups {
		n += 4 + len(g.Group) + 8
	}
	return n
}

// PutPartition encodes p into dst, which must hold PartitionSize(p) bytes.
func PutPartition(dst []byte, p *retention.Partition) int {
	off := putString(dst, 0, p.Topic)
	le := binary.LittleEndian
	le.PutUint32(dst[off:], uint32(p.Partition))
	off += 4
	for _, v := range [...]int64{p.LogStartOffset, p.LogEndOffset, p.HighWatermark, p.NowMs} {
		le.PutUint64(dst[off:], uint64(v))
		off += 8
	}
	le.PutUint32(dst[off:], uint32(len(p.Segments)))
	off += 4
	for _, s := range p.Segments {
		for _, v := range [...]int64{s.BaseOffset, s.NextOffset, s.SizeBytes, s.LargestTimestampMs} {
			le.PutUint64(dst[off:], uint64(v))
			off += 8
		}
	}
	le.PutUint32(dst[off:], uint32(len(p.Groups)))
	off += 4
	for _, g := range p.Groups {
		off = putString(dst, off, g.Group)
		le.PutUint64(dst[off:], uint64(g.Offset))
		off += 8
	}
	return off
}

// DecodePartition decodes a partition written by PutPartition. Strings are
// copied, so the result outlives src.
func DecodePartition(src []byte) (retention.Partition, error) {
	var p retention.Partition
	r := reader{src: src}
	p.Topic = string(r.str())
	p.Partition = int32(r.u32())
	p.LogStartOffset = r.i64()
	p.LogEndOffset = r.i64()
	p.HighWatermark = r.i64()
	p.NowMs = r.i64()
	ns := r.count(32)
	if r.bad {
		return p, ErrMalformed
	}
	p.Segments = make([]retention.Segment, ns)
	for i := range p.Segments {
		p.Segments[i] = retention.Segment{BaseOffset: r.i64(), NextOffset: r.i64(), SizeBytes: r.i64(), LargestTimestampMs: r.i64()}
	}
	ng := r.count(12)
	if r.bad {
		return p, ErrMalformed
	}
	p.Groups = make([]retention.GroupOffset, ng)
	for i := range p.Groups {
		p.Groups[i] = retention.GroupOffset{Group: string(r.str()), Offset: r.i64()}
	}
	if r.bad || r.off != len(src) {
		return p, ErrMalformed
	}
	return p, nil
}

// ActionsSize is the encoded size of actions.
func ActionsSize(actions []auth.Action) int {
	n := 0
	for i := range actions {
		a := &actions[i]
		n += 16 + len(a.Principal.Type) + len(a.Principal.Name) + len(a.Host) + 3 + len(a.Resource.Name)
	}
	return n
}

// PutActions encodes actions into dst, which must hold ActionsSize bytes.
func PutActions(dst []byte, actions []auth.Action) int {
	off := 0
	for i := range actions {
		a := &actions[i]
		off = putString(dst, off, a.Principal.Type)
		off = putString(dst, off, a.Principal.Name)
		off = putString(dst, off, a.Host)
		dst[off] = byte(a.Operation)
		dst[off+1] = byte(a.Resource.Type)
		dst[off+2] = byte(a.Resource.Pattern)
		off = putString(dst, off+3, a.Resource.Name)
	}
	return off
}

// DecodeActions calls fn for each of count actions in src. Strings alias
// src: an action is valid only until src is reused.
func DecodeActions(src []byte, count int, fn func(i int, a auth.Action) error) error {
	if count < 0 || count > len(src)/19 {
		return ErrMalformed
	}
	r := reader{src: src}
	for i := 0; i < count; i++ {
		var a auth.Action
		a.Principal.Type = aliasString(r.str())
		a.Principal.Name = aliasString(r.str())
		a.Host = aliasString(r.str())
		b := r.take(3)
		name := r.str()
		if r.bad {
			return ErrMalformed
		}
		a.Operation = auth.Operation(b[0])
		a.Resource = auth.Resource{Type: auth.ResourceType(b[1]), Pattern: auth.PatternType(b[2]), Name: aliasString(name)}
		if err := fn(i, a); err != nil {
			return err
		}
	}
	if r.off != len(src) {
		return ErrMalformed
	}
	return nil
}

func putString(dst []byte, off int, s string) int {
	binary.LittleEndian.PutUint32(dst[off:], uint32(len(s)))
	off += 4
	return off + copy(dst[off:], s)
}

var zeros [8]byte

// reader reads fixed-width fields, turning any overrun into bad (and
// zero values) instead of a panic.
type reader struct {
	src []byte
	off int
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.src)-r.off {
		r.bad = true
		return zeros[:] // callers check bad before using what they read
	}
	b := r.src[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

func (r *reader) u32() uint32 {
	b := r.take(4)
	if r.bad {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) i64() int64 {
	b := r.take(8)
	if r.bad {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(b))
}

func (r *reader) str() []byte {
	n := int(int32(r.u32()))
	if r.bad {
		return nil
	}
	return r.take(n)
}

// count reads an element count and checks that count elements of at least
// minSize bytes each could fit in what remains, before anyone allocates.
func (r *reader) count(minSize int) int {
	n := int(int32(r.u32()))
	if r.bad || n < 0 || n > (len(r.src)-r.off)/minSize {
		r.bad = true
		return 0
	}
	return n
}
