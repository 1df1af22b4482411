package main

import (
	"encoding/binary"
	"hash/crc32"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batch builds an uncompressed v2 RecordBatch of values with null keys, timestamps
// firstTs, firstTs+step, ...; it is the same bytes for both brokers, so answers can be compared.
func batch(values []string, firstTs, step int64) []byte {
	var recs []byte
	for i, v := range values {
		var r []byte
		r = append(r, 0)                          // attributes
		r = binary.AppendVarint(r, int64(i)*step) // timestamp delta
		r = binary.AppendVarint(r, int64(i))      // offset delta
		r = binary.AppendVarint(r, -1)            // null key
		r = binary.AppendVarint(r, int64(len(v))) // value length
		r = append(r, v...)                       // value
		r = binary.AppendVarint(r, 0)             // no headers
		recs = append(binary.AppendVarint(recs, int64(len(r))), r...)
	}
	n := len(values)
	b := make([]byte, 0, 61+len(recs))
	b = binary.BigEndian.AppendUint64(b, 0)                               // base offset
	b = binary.BigEndian.AppendUint32(b, uint32(49+len(recs)))            // batch length
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)                      // partition leader epoch
	b = append(b, 2)                                                      // magic
	b = binary.BigEndian.AppendUint32(b, 0)                               // crc, filled below
	b = binary.BigEndian.AppendUint16(b, 0)                               // attributes
	b = binary.BigEndian.AppendUint32(b, uint32(n-1))                     // last offset delta
	b = binary.BigEndian.AppendUint64(b, uint64(firstTs))                 // first timestamp
	b = binary.BigEndian.AppendUint64(b, uint64(firstTs+int64(n-1)*step)) // max timestamp
	b = binary.BigEndian.AppendUint64(b, 0xffffffffffffffff)              // producer id -1
	b = binary.BigEndian.AppendUint16(b, 0xffff)                          // producer epoch -1
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)                      // base sequence -1
	b = binary.BigEndian.AppendUint32(b, uint32(n))                       // record count
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}
