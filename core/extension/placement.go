package extension

import (
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// ErrMisplaced is wrapped by the placement check's error for a keyed record
// in a partition its topic's partitioner would not choose. The produce path
// answers it with INVALID_RECORD and the message.
var ErrMisplaced = errors.New("record in the wrong partition")

// ErrCheckFailed is wrapped when the placement check could not run: the
// partitioner failed with no fallback, or the batch could not be read.
var ErrCheckFailed = errors.New("placement check failed")

// Placement checks produced records against a topic's partitioner. A
// Placement is not safe for concurrent use; it reuses its buffers between
// checks.
type Placement struct {
	// MaxDecompressed bounds a compressed batch's records.
	MaxDecompressed int

	records []partitioner.Record
	headers []partitioner.Header
	arena   []byte
	where   []int // records[i] is record where[i] of its record set
	out     []int32
}

// Check reports the first keyed record of recordSet (one or more v2
// batches, as produced) that p places elsewhere than partition. Records
// with a null key may go anywhere, as with Kafka's clients; control batches
// are skipped. p is called once for the whole record set.
func (c *Placement) Check(p *Partitioner, recordSet []byte, partition, numPartitions int32) error {
	c.records, c.headers, c.arena, c.where = c.records[:0], c.headers[:0], c.arena[:0], c.where[:0]
	it := record.Batches(recordSet)
	index := 0
	for it.Next() {
		h := it.Header()
		if h.IsControl() {
			index += int(h.NumRecords)
			continue
		}
		err := record.Records(it.Batch(), c.MaxDecompressed, func(r record.Record) error {
			if r.Key != nil {
				c.add(r, index)
			}
			index++
			return nil
		})
		if err != nil {
			return fmt.Errorf("extension: placement check: %w: %w", ErrCheckFailed, err)
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("extension: placement check: %w: %w", ErrCheckFailed, err)
	}
	if len(c.records) == 0 {
		return nil
	}
	if cap(c.out) < len(c.records) {
		c.out = make([]int32, len(c.records))
	}
	out := c.out[:len(c.records)]
	if err := p.PartitionBatch(c.records, numPartitions, out); err != nil {
		return fmt.Errorf("extension: placement check: %w: %w", ErrCheckFailed, err)
	}
	for i, want := range out {
		if want != partition {
			return fmt.Errorf("extension: record %d (key %s) belongs in partition %d by partitioner %s, not partition %d: %w",
				c.where[i], quoteKey(c.records[i].Key), want, p.Name, partition, ErrMisplaced)
		}
	}
	return nil
}

// add copies r into the arena, since record slices are valid only during
// the callback. A slice taken before the arena grows keeps pointing at the
// old array, whose bytes never change, so every copy stays valid.
func (c *Placement) add(r record.Record, index int) {
	off := func(b []byte) []byte {
		start := len(c.arena)
		c.arena = append(c.arena, b...)
		return c.arena[start:len(c.arena):len(c.arena)]
	}
	rec := partitioner.Record{Key: off(r.Key)}
	if r.Value != nil {
		rec.Value = off(r.Value)
	}
	if len(r.Headers) > 0 {
		first := len(c.headers)
		for _, h := range r.Headers {
			c.headers = append(c.headers, partitioner.Header{Key: h.Key, Value: off(h.Value)})
		}
		rec.Headers = c.headers[first:len(c.headers):len(c.headers)]
	}
	c.records = append(c.records, rec)
	c.where = append(c.where, index)
}

// quoteKey renders a key for an error message, cut to 64 bytes.
func quoteKey(k []byte) string {
	if len(k) > 64 {
		return fmt.Sprintf("%q…", k[:64])
	}
	return fmt.Sprintf("%q", k)
}
