package extension

import (
	"fmt"

	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

// Produced is a produced record set decoded once for the checks that read
// its records: the placement check and the produce interceptor. A Produced
// is not safe for concurrent use; it reuses its buffers between Decodes.
type Produced struct {
	// MaxDecompressed bounds a compressed batch's records.
	MaxDecompressed int

	Batches []ProducedBatch
	// Records are the records of every data batch, in order; control
	// batches contribute none.
	Records []interceptor.Record

	headers []interceptor.Header
	arena   []byte
	// first and index are where the next batch fed through Record and
	// Batch starts, in Records and counting control records.
	first, index int
}

// ProducedBatch is one batch of a produced record set.
type ProducedBatch struct {
	Header   record.Header
	Pos, Len int // the batch's bytes in the record set
	// Index is the index in the record set of the batch's first record
	// (counting control records), First and N its records in Records.
	Index, First, N int
}

// Reset empties p for a record set fed to it through Record and Batch by
// the pass that validates the record set (a partition's Check), which
// decodes it once for the append and for these checks.
func (p *Produced) Reset() {
	p.Batches, p.Records, p.headers, p.arena = p.Batches[:0], p.Records[:0], p.headers[:0], p.arena[:0]
	p.first, p.index = 0, 0
}

// Record adds a record of the batch with header h; records of control
// batches are not kept, as Decode keeps none. It never fails.
func (p *Produced) Record(h record.Header, r record.Record) error {
	if !h.IsControl() {
		p.add(r, r.Timestamp(h))
	}
	return nil
}

// Batch ends the batch whose records Record was given: f are its facts,
// pos and size its bytes in the record set.
func (p *Produced) Batch(f record.Facts, pos, size int) {
	b := ProducedBatch{Header: f.Header, Pos: pos, Len: size, Index: p.index, First: p.first, N: len(p.Records) - p.first}
	if f.IsControl() {
		p.index += int(f.NumRecords)
	} else {
		p.index += b.N
	}
	p.first = len(p.Records)
	p.Batches = append(p.Batches, b)
}

// Decode decodes recordSet (one or more v2 batches, as produced). Record
// slices point into an arena owned by p, valid until the next Decode.
func (p *Produced) Decode(recordSet []byte) error {
	p.Reset()
	it := record.Batches(recordSet)
	index := 0
	for it.Next() {
		h := it.Header()
		b := ProducedBatch{Header: h, Pos: it.Position(), Len: len(it.Batch()), Index: index, First: len(p.Records)}
		if h.IsControl() {
			index += int(h.NumRecords)
			p.Batches = append(p.Batches, b)
			continue
		}
		err := record.Records(it.Batch(), p.MaxDecompressed, func(r record.Record) error {
			p.add(r, r.Timestamp(h))
			return nil
		})
		if err != nil {
			return fmt.Errorf("extension: decoding produced records: %w", err)
		}
		b.N = len(p.Records) - b.First
		index += b.N
		p.Batches = append(p.Batches, b)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("extension: decoding produced records: %w", err)
	}
	// Header slices taken before p.headers grew point at the old array,
	// whose elements never change, so every record's headers stay valid.
	return nil
}

// add copies r into the arena, since record slices are valid only during
// the callback. A slice taken before the arena grows keeps pointing at the
// old array, whose bytes never change, so every copy stays valid.
func (p *Produced) add(r record.Record, ts int64) {
	off := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		if len(b) == 0 {
			return []byte{} // empty, not null
		}
		start := len(p.arena)
		p.arena = append(p.arena, b...)
		return p.arena[start:len(p.arena):len(p.arena)]
	}
	rec := interceptor.Record{Key: off(r.Key), Value: off(r.Value), Timestamp: ts, OffsetDelta: r.OffsetDelta}
	if len(r.Headers) > 0 {
		first := len(p.headers)
		for _, h := range r.Headers {
			p.headers = append(p.headers, interceptor.Header{Key: h.Key, Value: off(h.Value)})
		}
		rec.Headers = p.headers[first:len(p.headers):len(p.headers)]
	}
	p.Records = append(p.Records, rec)
}
