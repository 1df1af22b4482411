package record

import "fmt"

// Record is one record of a batch. Key and Value are nil for a null key or
// value. Slices alias the batch (or its decompressed form) and are valid only
// for the duration of the callback that receives them.
type Record struct {
	OffsetDelta    int32
	TimestampDelta int64
	Key, Value     []byte
	Headers        []RecordHeader
}

// RecordHeader is one record header. Value is nil for a null value.
type RecordHeader struct {
	Key   string
	Value []byte
}

// Timestamp is the record's timestamp as Kafka reports it: the batch's
// MaxTimestamp for LogAppendTime batches, else FirstTimestamp plus the delta.
func (r Record) Timestamp(h Header) int64 {
	if h.LogAppendTime() {
		return h.MaxTimestamp
	}
	return h.FirstTimestamp + r.TimestampDelta
}

// recordReader walks the records section of a batch.
type recordReader struct {
	b   []byte
	pos int
	// headers is reused between records so only records with headers allocate.
	headers []RecordHeader
	// wantHeaders decodes header keys and values; validation only skips them.
	wantHeaders bool
	// keys are the header keys of the previous records by position: records
	// of a batch mostly repeat them, and reusing the string saves an
	// allocation per record.
	keys []string
}

// next decodes the record at the current position. index is the record's
// position in the batch, for error messages.
func (rr *recordReader) next(index int) (Record, error) {
	length, n := readVarint(rr.b[rr.pos:])
	if n == 0 {
		return Record{}, corruptf("record %d: malformed length", index)
	}
	if length < 0 || int(length) > len(rr.b)-rr.pos-n {
		return Record{}, corruptf("record %d: length %d exceeds the %d bytes left", index, length, len(rr.b)-rr.pos-n)
	}
	start := rr.pos + n
	body := rr.b[start : start+int(length)]
	rr.pos = start + int(length)

	var r Record
	p := 0
	if len(body) < 1 {
		return Record{}, corruptf("record %d: empty body", index)
	}
	p++ // attributes: unused in v2
	var k int
	if r.TimestampDelta, k = readVarlong(body[p:]); k == 0 {
		return Record{}, corruptf("record %d: malformed timestamp delta", index)
	}
	p += k
	if r.OffsetDelta, k = readVarint(body[p:]); k == 0 {
		return Record{}, corruptf("record %d: malformed offset delta", index)
	}
	p += k
	var err error
	if r.Key, p, err = readBytes(body, p); err != nil {
		return Record{}, fmt.Errorf("record %d: key: %w", index, err)
	}
	if r.Value, p, err = readBytes(body, p); err != nil {
		return Record{}, fmt.Errorf("record %d: value: %w", index, err)
	}
	count, k := readVarint(body[p:])
	if k == 0 {
		return Record{}, corruptf("record %d: malformed header count", index)
	}
	p += k
	// Each header takes at least two bytes, which bounds count before any
	// allocation.
	if count < 0 || int(count) > (len(body)-p)/2 {
		return Record{}, corruptf("record %d: header count %d does not fit in %d bytes", index, count, len(body)-p)
	}
	if rr.wantHeaders {
		rr.headers = rr.headers[:0]
	}
	for i := 0; i < int(count); i++ {
		var key, val []byte
		if key, p, err = readBytes(body, p); err != nil {
			return Record{}, fmt.Errorf("record %d: header %d key: %w", index, i, err)
		}
		if key == nil {
			return Record{}, corruptf("record %d: header %d has a null key", index, i)
		}
		if val, p, err = readBytes(body, p); err != nil {
			return Record{}, fmt.Errorf("record %d: header %d value: %w", index, i, err)
		}
		if rr.wantHeaders {
			rr.headers = append(rr.headers, RecordHeader{Key: rr.key(i, key), Value: val})
		}
	}
	if p != len(body) {
		return Record{}, corruptf("record %d: %d bytes left over inside the record", index, len(body)-p)
	}
	if rr.wantHeaders && count > 0 {
		r.Headers = rr.headers
	}
	return r, nil
}

// key returns key, the key of header i of a record, as a string, reusing
// the previous record's when it is the same.
func (rr *recordReader) key(i int, key []byte) string {
	if i < len(rr.keys) && rr.keys[i] == string(key) {
		return rr.keys[i]
	}
	k := string(key)
	switch {
	case i < len(rr.keys):
		rr.keys[i] = k
	case i == len(rr.keys) && i < 8:
		rr.keys = append(rr.keys, k)
	}
	return k
}

// readBytes decodes a varint-length-prefixed byte string (-1 = null) at p.
func readBytes(b []byte, p int) ([]byte, int, error) {
	l, n := readVarint(b[p:])
	if n == 0 {
		return nil, p, corruptf("malformed length")
	}
	p += n
	if l == -1 {
		return nil, p, nil
	}
	if l < -1 || int(l) > len(b)-p {
		return nil, p, corruptf("length %d exceeds the %d bytes left", l, len(b)-p)
	}
	return b[p : p+int(l) : p+int(l)], p + int(l), nil
}
