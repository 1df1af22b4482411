package abi

import (
	"encoding/binary"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

// InterceptSlots is the size of the output slots at the start of a
// gregor_intercept buffer: the guest writes there the address and length
// of its encoded decision.
const InterceptSlots = 8

// BatchSize is the encoded size of b after the output slots.
func BatchSize(b *interceptor.Batch) int {
	n := 4 + len(b.Topic) + 4 + 4 + len(b.Principal.Type) + 4 + len(b.Principal.Name)
	for i := range b.Records {
		n += 12 + interceptRecordSize(&b.Records[i])
	}
	return n
}

// interceptRecordSize is the size of a record's key, value and headers.
func interceptRecordSize(r *interceptor.Record) int {
	n := 12 + len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += 8 + len(h.Key) + len(h.Value)
	}
	return n
}

// PutBatch encodes b into dst, which must hold BatchSize(b) bytes, and
// returns the bytes written.
func PutBatch(dst []byte, b *interceptor.Batch) int {
	off := putString(dst, 0, b.Topic)
	binary.LittleEndian.PutUint32(dst[off:], uint32(b.Partition))
	off += 4
	off = putString(dst, off, b.Principal.Type)
	off = putString(dst, off, b.Principal.Name)
	for i := range b.Records {
		r := &b.Records[i]
		binary.LittleEndian.PutUint32(dst[off:], uint32(r.OffsetDelta))
		binary.LittleEndian.PutUint64(dst[off+4:], uint64(r.Timestamp))
		off = putInterceptRecord(dst, off+12, r)
	}
	return off
}

func putInterceptRecord(dst []byte, off int, r *interceptor.Record) int {
	off = putBytes(dst, off, r.Key)
	off = putBytes(dst, off, r.Value)
	binary.LittleEndian.PutUint32(dst[off:], uint32(len(r.Headers)))
	off += 4
	for _, h := range r.Headers {
		off = putString(dst, off, h.Key)
		off = putBytes(dst, off, h.Value)
	}
	return off
}

// BatchDecoder decodes gregor_intercept input without copying: the
// batch's slices alias the input. The zero value is ready; reusing a
// decoder reuses its slices.
type BatchDecoder struct {
	batch   interceptor.Batch
	headers []interceptor.Header
}

// Decode decodes count records of src (the input after the output slots).
// The batch is valid until the next Decode.
func (d *BatchDecoder) Decode(src []byte, count int) (*interceptor.Batch, error) {
	r := reader{src: src}
	b := &d.batch
	b.Topic = aliasString(r.str())
	b.Partition = int32(r.u32())
	b.Principal = auth.Principal{Type: aliasString(r.str()), Name: aliasString(r.str())}
	if r.bad || count < 0 || count > (len(src)-r.off)/24 {
		return nil, ErrMalformed
	}
	if cap(b.Records) < count {
		b.Records = make([]interceptor.Record, count)
	}
	b.Records = b.Records[:count]
	hs := d.headers[:0]
	off := r.off
	// The records are decoded in place, with the reads written out rather
	// than called: in a Go wasm guest a call costs tens of instructions,
	// and a no-op interceptor's time is mostly this loop.
	for i := range b.Records {
		rec := &b.Records[i]
		if len(src)-off < 24 {
			return nil, ErrMalformed
		}
		rec.OffsetDelta = int32(load32(src, off))
		rec.Timestamp = int64(load64(src, off+4))
		l := int32(load32(src, off+12))
		off += 16
		rec.Key = nil
		if l != -1 {
			if l < 0 || int(l) > len(src)-off-8 {
				return nil, ErrMalformed
			}
			end := off + int(l)
			rec.Key = src[off:end:end]
			off = end
		}
		l = int32(load32(src, off))
		off += 4
		rec.Value = nil
		if l != -1 {
			if l < 0 || int(l) > len(src)-off-4 {
				return nil, ErrMalformed
			}
			end := off + int(l)
			rec.Value = src[off:end:end]
			off = end
		}
		nh := int(int32(load32(src, off)))
		off += 4
		rec.Headers = nil
		if nh != 0 {
			rr := reader{src: src, off: off}
			first := len(hs)
			if hs = decodeHeaders(&rr, nh, hs); rr.bad {
				return nil, ErrMalformed
			}
			off = rr.off
			rec.Headers = hs[first:len(hs):len(hs)]
		}
	}
	d.headers = hs
	if off != len(src) {
		return nil, ErrMalformed
	}
	if len(hs) > 0 {
		fixHeaders(b.Records, hs)
	}
	return b, nil
}

// decodeHeaders appends nh headers read from r to hs; r.bad says it failed.
func decodeHeaders(r *reader, nh int, hs []interceptor.Header) []interceptor.Header {
	if nh < 0 || nh > (len(r.src)-r.off)/8 {
		r.bad = true
		return hs
	}
	for j := 0; j < nh; j++ {
		k := r.str()
		if r.bad {
			return hs
		}
		v, off, ok := getBytes(r.src, r.off)
		if !ok {
			r.bad = true
			return hs
		}
		r.off = off
		hs = append(hs, interceptor.Header{Key: aliasString(k), Value: v})
	}
	return hs
}

// fixHeaders points each record's headers at the final header slice, since
// appending may have moved it after an earlier record took a sub-slice.
func fixHeaders(recs []interceptor.Record, all []interceptor.Header) {
	pos := 0
	for i := range recs {
		n := len(recs[i].Headers)
		if n > 0 {
			recs[i].Headers = all[pos : pos+n : pos+n]
			pos += n
		}
	}
}

// decodeRecordBody reads key, value and headers into rec, appending the
// headers to hs.
func decodeRecordBody(r *reader, rec *interceptor.Record, hs *[]interceptor.Header) bool {
	var ok bool
	if rec.Key, r.off, ok = getBytes(r.src, r.off); !ok {
		return false
	}
	if rec.Value, r.off, ok = getBytes(r.src, r.off); !ok {
		return false
	}
	nh := r.count(8)
	if r.bad {
		return false
	}
	for j := 0; j < nh; j++ {
		k := r.str()
		if r.bad {
			return false
		}
		var v []byte
		if v, r.off, ok = getBytes(r.src, r.off); !ok {
			return false
		}
		*hs = append(*hs, interceptor.Header{Key: aliasString(k), Value: v})
	}
	if nh > 0 {
		// The length is what counts: fixHeaders re-slices once all are read.
		rec.Headers = (*hs)[len(*hs)-nh:]
	}
	return true
}

// DecisionSize is the encoded size of d.
func DecisionSize(d *interceptor.Decision) int {
	n := 1
	switch d.Action {
	case interceptor.Reject:
		n += 4 + len(d.Message) + 4
		for _, e := range d.Errors {
			n += 8 + len(e.Message)
		}
	case interceptor.Rewrite:
		for i := range d.Records {
			n += interceptRecordSize(&d.Records[i])
		}
	}
	return n
}

// PutDecision encodes d into dst, which must hold DecisionSize(d) bytes:
// the action byte, then for a reject the message and the record errors
// (i32 count, then index i32 and message each), for a rewrite every
// record's key, value and headers.
func PutDecision(dst []byte, d *interceptor.Decision) int {
	dst[0] = byte(d.Action)
	off := 1
	switch d.Action {
	case interceptor.Reject:
		off = putString(dst, off, d.Message)
		binary.LittleEndian.PutUint32(dst[off:], uint32(len(d.Errors)))
		off += 4
		for _, e := range d.Errors {
			binary.LittleEndian.PutUint32(dst[off:], uint32(e.Index))
			off = putString(dst, off+4, e.Message)
		}
	case interceptor.Rewrite:
		for i := range d.Records {
			off = putInterceptRecord(dst, off, &d.Records[i])
		}
	}
	return off
}

// DecodeDecision decodes a decision for a batch of count records. Its
// slices alias src; the host copies what it keeps. Timestamps and offset
// deltas of rewritten records are left zero (a rewrite cannot change them).
func DecodeDecision(src []byte, count int) (interceptor.Decision, error) {
	var d interceptor.Decision
	if len(src) < 1 {
		return d, ErrMalformed
	}
	d.Action = interceptor.Action(src[0])
	r := reader{src: src, off: 1}
	switch d.Action {
	case interceptor.Accept:
	case interceptor.Reject:
		d.Message = string(r.str())
		n := r.count(8)
		for i := 0; i < n && !r.bad; i++ {
			idx := int32(r.u32())
			msg := r.str()
			d.Errors = append(d.Errors, interceptor.RecordError{Index: idx, Message: string(msg)})
		}
	case interceptor.Rewrite:
		if count < 0 || count > (len(src)-1)/12 {
			return d, ErrMalformed
		}
		var hs []interceptor.Header
		d.Records = make([]interceptor.Record, count)
		for i := range d.Records {
			if !decodeRecordBody(&r, &d.Records[i], &hs) {
				return d, ErrMalformed
			}
		}
		fixHeaders(d.Records, hs)
	default:
		return d, ErrMalformed
	}
	if r.bad || r.off != len(src) {
		return d, ErrMalformed
	}
	return d, nil
}
