package extension

import (
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/interceptor"
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
	// MaxDecompressed bounds a compressed batch's records (Check only).
	MaxDecompressed int

	produced Produced
	records  []partitioner.Record
	headers  []partitioner.Header
	where    []int // records[i] is record where[i] of its record set
	out      []int32
}

// Check decodes recordSet (one or more v2 batches, as produced) and runs
// CheckDecoded on it, for a caller that holds only bytes. The produce path
// does not: it calls CheckDecoded on the records that the pass validating
// the batch for the append decoded (partition.Check with a Produced), so a
// batch is decompressed once.
func (c *Placement) Check(p *Partitioner, recordSet []byte, partition, numPartitions int32) error {
	c.produced.MaxDecompressed = c.MaxDecompressed
	if err := c.produced.Decode(recordSet); err != nil {
		return fmt.Errorf("extension: placement check: %w: %w", ErrCheckFailed, err)
	}
	return c.CheckDecoded(p, &c.produced, partition, numPartitions)
}

// CheckDecoded reports the first keyed record of the decoded record set
// that p places elsewhere than partition. Records with a null key may go
// anywhere, as with Kafka's clients; control batches hold no records in
// Produced. p is called once for the whole record set.
func (c *Placement) CheckDecoded(p *Partitioner, set *Produced, partition, numPartitions int32) error {
	c.records, c.headers, c.where = c.records[:0], c.headers[:0], c.where[:0]
	for _, b := range set.Batches {
		for i, r := range set.Records[b.First : b.First+b.N] {
			if r.Key != nil {
				c.add(r, b.Index+i)
			}
		}
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

// add views r as a partitioner's record; the bytes stay in the Produced
// arena.
func (c *Placement) add(r interceptor.Record, index int) {
	rec := partitioner.Record{Key: r.Key, Value: r.Value}
	if len(r.Headers) > 0 {
		first := len(c.headers)
		for _, h := range r.Headers {
			c.headers = append(c.headers, partitioner.Header{Key: h.Key, Value: h.Value})
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
