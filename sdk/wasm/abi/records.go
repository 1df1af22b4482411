package abi

import (
	"encoding/binary"
	"unsafe"

	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// RecordSize is the encoded size of r with the given fields.
func RecordSize(r *partitioner.Record, fields int32) int {
	n := 12 // key length, value length, header count
	if fields&FieldKey != 0 {
		n += len(r.Key)
	}
	if fields&FieldValue != 0 {
		n += len(r.Value)
	}
	if fields&FieldHeaders != 0 {
		for _, h := range r.Headers {
			n += 8 + len(h.Key) + len(h.Value)
		}
	}
	return n
}

// PutRecord encodes r into dst, which must hold RecordSize(r, fields)
// bytes, and returns the bytes written.
func PutRecord(dst []byte, r *partitioner.Record, fields int32) int {
	off := 0
	if fields&FieldKey != 0 {
		off = putBytes(dst, off, r.Key)
	} else {
		off = putBytes(dst, off, nil)
	}
	if fields&FieldValue != 0 {
		off = putBytes(dst, off, r.Value)
	} else {
		off = putBytes(dst, off, nil)
	}
	if fields&FieldHeaders == 0 {
		binary.LittleEndian.PutUint32(dst[off:], 0)
		return off + 4
	}
	binary.LittleEndian.PutUint32(dst[off:], uint32(len(r.Headers)))
	off += 4
	for _, h := range r.Headers {
		binary.LittleEndian.PutUint32(dst[off:], uint32(len(h.Key)))
		off += 4
		off += copy(dst[off:], h.Key)
		off = putBytes(dst, off, h.Value)
	}
	return off
}

// putBytes writes a length (-1 for nil) and the bytes.
func putBytes(dst []byte, off int, b []byte) int {
	if b == nil {
		binary.LittleEndian.PutUint32(dst[off:], 0xffffffff)
		return off + 4
	}
	binary.LittleEndian.PutUint32(dst[off:], uint32(len(b)))
	off += 4
	return off + copy(dst[off:], b)
}

// RecordDecoder decodes a batch of records without copying: keys, values
// and header keys alias the input buffer, so a decoded record is valid only
// until the buffer is reused. The zero value is ready; reusing one decoder
// reuses its header slice.
type RecordDecoder struct {
	headers []partitioner.Header
}

// Decode calls fn for each of count records in src, in order. It stops at
// the first error from fn and returns it.
func (d *RecordDecoder) Decode(src []byte, count int, fn func(i int, r partitioner.Record) error) error {
	if count < 0 || count > len(src)/12 {
		return ErrMalformed
	}
	off := 0
	for i := 0; i < count; i++ {
		var r partitioner.Record
		var ok bool
		if r.Key, off, ok = getBytes(src, off); !ok {
			return ErrMalformed
		}
		if r.Value, off, ok = getBytes(src, off); !ok {
			return ErrMalformed
		}
		if len(src)-off < 4 {
			return ErrMalformed
		}
		nh := int(binary.LittleEndian.Uint32(src[off:]))
		off += 4
		if nh < 0 || nh > (len(src)-off)/8 {
			return ErrMalformed
		}
		d.headers = d.headers[:0]
		for j := 0; j < nh; j++ {
			var k, v []byte
			if k, off, ok = getBytes(src, off); !ok || k == nil {
				return ErrMalformed
			}
			if v, off, ok = getBytes(src, off); !ok {
				return ErrMalformed
			}
			d.headers = append(d.headers, partitioner.Header{Key: aliasString(k), Value: v})
		}
		if nh > 0 {
			r.Headers = d.headers
		}
		if err := fn(i, r); err != nil {
			return err
		}
	}
	return nil
}

// getBytes reads a length-prefixed byte string; length -1 is nil.
func getBytes(src []byte, off int) ([]byte, int, bool) {
	if len(src)-off < 4 {
		return nil, off, false
	}
	n := int32(binary.LittleEndian.Uint32(src[off:]))
	off += 4
	if n == -1 {
		return nil, off, true
	}
	if n < 0 || int(n) > len(src)-off {
		return nil, off, false
	}
	return src[off : off+int(n) : off+int(n)], off + int(n), true
}

// aliasString views b as a string without copying.
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
