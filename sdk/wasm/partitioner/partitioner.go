// Package partitioner is the guest side of a WebAssembly partitioner: a Go
// module registers a function from record and partition count to partition,
// and this package exports gregor_partition, which decodes a whole batch from
// the exchange buffer, calls the function once per record and writes the
// partitions back. It owns the decoding and range checks, never placement.
package partitioner

import (
	"encoding/binary"
	"unsafe"

	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

// Record is what a partitioner sees of a record. Its slices alias the
// exchange buffer: copy anything kept past the call.
type Record = partitioner.Record

// Header is a record header.
type Header = partitioner.Header

// Fields a partitioner reads, for Uses.
const (
	Key     = abi.FieldKey
	Value   = abi.FieldValue
	Headers = abi.FieldHeaders
)

var (
	handler      func(r Record, numPartitions int) int
	refHandler   func(r *Record, numPartitions int) int
	batchHandler func(records []Record, numPartitions int32, out []int32) error
	fields       int32 = abi.AllFields
)

// Register makes fn the module's partitioner. fn must return a partition in
// [0, numPartitions); anything else fails the batch and the broker applies
// its fallback. Call Register from an init function.
func Register(fn func(r Record, numPartitions int) int) {
	handler, refHandler, batchHandler = fn, nil, nil
}

// RegisterRef is Register for a function that takes the record by pointer,
// faster than Register in a Go guest (RegisterBatch is faster still): the Go wasm compiler passes a Record value
// (72 bytes) with a memory.copy per call, which costs more than hashing a
// short key. The record is reused for every record of every batch, and its
// slices alias the exchange buffer: fn must not keep r, and must copy
// anything it keeps past the call.
func RegisterRef(fn func(r *Record, numPartitions int) int) {
	refHandler, handler, batchHandler = fn, nil, nil
}

// RegisterBatch makes fn the module's partitioner, called once per batch
// with every record decoded: fn writes record i's partition into out[i],
// each in [0, numPartitions), or returns an error, which fails the batch.
// Its signature is sdk/partitioner.BatchPartitioner's PartitionBatch, so
// one implementation serves a go-plugin and a WebAssembly module.
//
// It is the fastest form in a Go guest, where every function call costs
// tens of instructions: the batch is decoded in one loop and fn places
// it in another, with no call per record but the ones fn makes
// (KeyPartition, say). records and out are reused for every batch and the
// records' slices alias the exchange buffer: fn must not keep them past
// the call.
func RegisterBatch(fn func(records []Record, numPartitions int32, out []int32) error) {
	batchHandler, handler, refHandler = fn, nil, nil
}

// Uses tells the broker which fields fn reads (Key|Headers, say); the
// others arrive as nil, which saves copying record values into the module.
// The default is every field.
func Uses(f int32) { fields = f & abi.AllFields }

// Fields returns what Uses set.
func Fields() int32 { return fields }

// KeyPartition is Kafka's placement of a keyed record:
// (murmur2(key) & 0x7fffffff) % numPartitions.
func KeyPartition(key []byte, numPartitions int) int {
	if numPartitions <= 0 {
		return 0
	}
	return int(murmur2(key)&0x7fffffff) % numPartitions
}

// Handle runs the registered partitioner over an encoded batch: the first
// 4*count bytes of buf receive the partitions, the records follow. It
// returns an ABI result code. A panic in the handler is caught and reported
// as CodeFailed.
func Handle(buf []byte, count, numPartitions int32) (code int32) {
	if handler == nil && refHandler == nil && batchHandler == nil {
		return abi.CodeNoHandler
	}
	slots := abi.SlotsSize(int(count), 4)
	if count < 0 || numPartitions < 1 || slots > len(buf) {
		return abi.CodeBadInput
	}
	defer func() {
		if recover() != nil {
			code = abi.CodeFailed
		}
	}()
	out := buf[:slots]
	src := buf[slots:]
	n := int(numPartitions)
	if int(count) > len(src)/12 {
		return abi.CodeBadInput
	}
	if batchHandler != nil {
		return handleBatch(out, src, int(count), numPartitions)
	}
	// The loop decodes in place rather than through abi.RecordDecoder's
	// callback: in a Go wasm guest every call and every copy of a Record
	// costs tens of instructions, and the decoding is most of a cheap
	// partitioner's time.
	r := &cur
	off := 0
	for i := 0; i < int(count); i++ {
		// key and value: i32 length (-1 null), bytes; written out rather
		// than called, since the Go wasm compiler does not inline a helper.
		if len(src)-off < 8 {
			return abi.CodeBadInput
		}
		l := int32(binary.LittleEndian.Uint32(src[off:]))
		off += 4
		r.Key = nil
		if l != -1 {
			if l < 0 || int(l) > len(src)-off-4 {
				return abi.CodeBadInput
			}
			end := off + int(l)
			r.Key = src[off:end:end]
			off = end
		}
		l = int32(binary.LittleEndian.Uint32(src[off:]))
		off += 4
		r.Value = nil
		if l != -1 {
			if l < 0 || int(l) > len(src)-off-4 {
				return abi.CodeBadInput
			}
			end := off + int(l)
			r.Value = src[off:end:end]
			off = end
		}
		nh := int(binary.LittleEndian.Uint32(src[off:]))
		off += 4
		r.Headers = nil
		if nh != 0 {
			var ok bool
			if off, ok = decodeHeaders(src, off, nh); !ok {
				return abi.CodeBadInput
			}
			r.Headers = headers
		}
		var p int
		if refHandler != nil {
			p = refHandler(r, n)
		} else {
			p = handler(*r, n)
		}
		if p < 0 || p >= n {
			return abi.CodeFailed
		}
		binary.LittleEndian.PutUint32(out[4*i:], uint32(p))
	}
	return abi.OK
}

// handleBatch decodes every record into batch and calls batchHandler.
func handleBatch(slots, src []byte, count int, numPartitions int32) int32 {
	if cap(batchRecs) < count {
		batchRecs = make([]Record, count)
	}
	recs := batchRecs[:count]
	hs := batchHeaders[:0]
	off := 0
	for i := range recs {
		r := &recs[i]
		// As in Handle, written out: a call per field costs more than
		// the decoding.
		if len(src)-off < 8 {
			return abi.CodeBadInput
		}
		l := int32(load32(src, off))
		off += 4
		r.Key = nil
		if l != -1 {
			if l < 0 || int(l) > len(src)-off-4 {
				return abi.CodeBadInput
			}
			end := off + int(l)
			r.Key = src[off:end:end]
			off = end
		}
		l = int32(load32(src, off))
		off += 4
		r.Value = nil
		if l != -1 {
			if l < 0 || int(l) > len(src)-off-4 {
				return abi.CodeBadInput
			}
			end := off + int(l)
			r.Value = src[off:end:end]
			off = end
		}
		nh := int(int32(load32(src, off)))
		off += 4
		r.Headers = nil
		if nh != 0 {
			var ok bool
			first := len(hs)
			if off, hs, ok = appendHeaders(hs, src, off, nh); !ok {
				return abi.CodeBadInput
			}
			r.Headers = hs[first:len(hs):len(hs)]
		}
	}
	if len(hs) > 0 {
		// Appending may have moved the headers after an earlier record
		// took its part: point every record at the final slice.
		pos := 0
		for i := range recs {
			if n := len(recs[i].Headers); n > 0 {
				recs[i].Headers = hs[pos : pos+n : pos+n]
				pos += n
			}
		}
	}
	batchHeaders = hs
	out := outSlots(slots, count)
	if err := batchHandler(recs, numPartitions, out); err != nil {
		return abi.CodeFailed
	}
	for _, p := range out {
		if p < 0 || p >= numPartitions {
			return abi.CodeFailed
		}
	}
	flushSlots(slots, out)
	return abi.OK
}

// batchRecs and batchHeaders are reused by every batch of RegisterBatch.
var (
	batchRecs    []Record
	batchHeaders []Header
	outScratch   []int32
)

// outSlots returns the output slots as []int32: the slots themselves on a
// little-endian machine when they are aligned (always, in a guest), else
// a scratch slice that flushSlots copies back.
func outSlots(slots []byte, count int) []int32 {
	if littleEndian && count > 0 && uintptr(unsafe.Pointer(&slots[0]))%4 == 0 {
		return unsafe.Slice((*int32)(unsafe.Pointer(&slots[0])), count)
	}
	if cap(outScratch) < count {
		outScratch = make([]int32, count)
	}
	return outScratch[:count]
}

func flushSlots(slots []byte, out []int32) {
	if len(out) > 0 && unsafe.Pointer(&slots[0]) == unsafe.Pointer(&out[0]) {
		return
	}
	for i, p := range out {
		binary.LittleEndian.PutUint32(slots[4*i:], uint32(p))
	}
}

// appendHeaders reads nh headers at off, appending them to hs.
func appendHeaders(hs []Header, src []byte, off, nh int) (int, []Header, bool) {
	if nh < 0 || nh > (len(src)-off)/8 {
		return off, hs, false
	}
	for j := 0; j < nh; j++ {
		k, o, ok := nullable(src, off)
		if !ok || k == nil {
			return off, hs, false
		}
		v, o, ok := nullable(src, o)
		if !ok {
			return off, hs, false
		}
		off = o
		hs = append(hs, Header{Key: unsafe.String(unsafe.SliceData(k), len(k)), Value: v})
	}
	return off, hs, true
}

// cur is the record being placed, reused so that decoding it zeroes and
// copies nothing.
var cur Record

// headers is the reused header slice of the record being placed.
var headers []Header

// decodeHeaders reads nh headers at off into headers.
func decodeHeaders(src []byte, off, nh int) (int, bool) {
	if nh < 0 || nh > (len(src)-off)/8 {
		return off, false
	}
	headers = headers[:0]
	for j := 0; j < nh; j++ {
		k, o, ok := nullable(src, off)
		if !ok || k == nil {
			return off, false
		}
		v, o, ok := nullable(src, o)
		if !ok {
			return off, false
		}
		off = o
		headers = append(headers, Header{Key: unsafe.String(unsafe.SliceData(k), len(k)), Value: v})
	}
	return off, true
}

// nullable reads a length-prefixed byte string at off (length -1 is nil);
// the result aliases src.
func nullable(src []byte, off int) ([]byte, int, bool) {
	if len(src)-off < 4 {
		return nil, off, false
	}
	l := int32(binary.LittleEndian.Uint32(src[off:]))
	off += 4
	if l == -1 {
		return nil, off, true
	}
	if l < 0 || int(l) > len(src)-off {
		return nil, off, false
	}
	end := off + int(l)
	return src[off:end:end], end, true
}
