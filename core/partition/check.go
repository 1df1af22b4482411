package partition

import (
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/record"
)

// A produced record set is checked once, outside the partition's lock
// (Check): one record.Inspect pass per batch parses its header, checks its
// CRC and decompresses it at most once, and the facts it returns travel to
// the append, the producer-state check and the log without the batch being
// parsed again. Only the append itself runs under the lock.

// RecordVisitor sees the records of a produced record set while Check
// decodes them, for the checks that need records (the placement check, a
// produce interceptor), so that the batch is not decompressed again for
// them.
type RecordVisitor interface {
	// Record is called with each record of a batch and the batch's
	// header; the record's slices are valid only during the call. An
	// error stops the check, which fails with ErrCorruptMessage.
	Record(h record.Header, r record.Record) error
	// Batch is called after the records of each batch, with its facts
	// and its place in the record set.
	Batch(f record.Facts, pos, size int)
}

// Checked is a produced record set checked by Check against the config
// the partition had then, ready for AppendChecked. The zero Checked holds
// nothing.
type Checked struct {
	records []byte
	// first is the facts of the first batch and rest those of the others:
	// a produce request holds one batch per partition nearly always.
	first record.Facts
	rest  []record.Facts
	gen   uint64 // the config generation checked against
}

// IsZero reports whether c is the zero Checked.
func (c Checked) IsZero() bool { return c.records == nil }

// Records returns the checked record set.
func (c Checked) Records() []byte { return c.records }

// batches is the number of batches checked.
func (c *Checked) batches() int { return 1 + len(c.rest) }

// facts returns the facts of batch i.
func (c *Checked) facts(i int) *record.Facts {
	if i == 0 {
		return &c.first
	}
	return &c.rest[i-1]
}

// Check validates a produce request's records for this partition, as
// Append would, without holding the partition's lock for the work: the
// lock is taken only to read the config. v, when not nil, sees every record
// as it is decoded; a compressed batch is then decompressed whole, bounded
// by maxDecoded as well as by the partition's own bound.
func (p *Partition) Check(records []byte, v RecordVisitor, maxDecoded int) (Checked, error) {
	p.mu.Lock()
	cfg, gen := p.cfg, p.cfgGen
	p.mu.Unlock()
	c, err := p.check(records, cfg, v, maxDecoded)
	c.gen = gen
	return c, err
}

// check validates every batch of records against cfg before any is
// appended, so that a bad request appends nothing.
func (p *Partition) check(records []byte, cfg Config, v RecordVisitor, maxDecoded int) (Checked, error) {
	if len(records) == 0 {
		return Checked{}, fmt.Errorf("%w: no record batch", ErrCorruptMessage)
	}
	c := Checked{records: records}
	now := p.now().UnixMilli()
	in := record.Inspection{MaxDecompressed: maxDecompressed(cfg), RequireKeys: cfg.Log.Compact}
	if v != nil {
		in.Record = v.Record
		if maxDecoded > 0 {
			in.MaxDecompressed = min(in.MaxDecompressed, maxDecoded)
		}
	}
	for pos, i := 0, 0; pos < len(records); i++ {
		rest := records[pos:]
		if len(rest) < record.HeaderSize {
			return Checked{}, fmt.Errorf("%w: %d trailing bytes are not a batch", ErrCorruptMessage, len(rest))
		}
		if magic := int8(rest[16]); magic != 2 {
			return Checked{}, fmt.Errorf("%w: magic %d", ErrUnsupportedForMagic, magic)
		}
		length, size := record.BatchSize(rest)
		if size > len(rest) || size < record.HeaderSize {
			return Checked{}, fmt.Errorf("%w: batch length %d with %d bytes left", ErrCorruptMessage, length, len(rest))
		}
		if cfg.MaxMessageBytes > 0 && size > int(cfg.MaxMessageBytes) {
			return Checked{}, fmt.Errorf("%w: %d bytes is over max.message.bytes %d", ErrMessageTooLarge, size, cfg.MaxMessageBytes)
		}
		batch := rest[:size]
		f, err := record.Inspect(batch, in)
		switch {
		case errors.Is(err, record.ErrTooLarge):
			return Checked{}, fmt.Errorf("%w: %w", ErrMessageTooLarge, err)
		case errors.Is(err, record.ErrNullKey):
			return Checked{}, fmt.Errorf("%w: %w: %w", ErrInvalidRecord, log.ErrNoKeyInCompactedTopic, err)
		case err != nil:
			return Checked{}, fmt.Errorf("%w: %w", ErrCorruptMessage, err)
		}
		if err := checkHeader(f.Header, cfg, now); err != nil {
			return Checked{}, err
		}
		if v != nil {
			v.Batch(f, pos, size)
		}
		if i == 0 {
			c.first = f
		} else {
			c.rest = append(c.rest, f)
		}
		pos += size
	}
	return c, nil
}

// checkHeader applies the produce rules a batch's header decides.
func checkHeader(h record.Header, cfg Config, now int64) error {
	if h.NumRecords <= 0 {
		return fmt.Errorf("%w: batch holds no records", ErrInvalidRecord)
	}
	if h.IsControl() {
		return fmt.Errorf("%w: clients may not write control batches", ErrInvalidRecord)
	}
	if h.IsTransactional() && h.ProducerID < 0 {
		return fmt.Errorf("%w: transactional batch without a producer id", ErrInvalidRecord)
	}
	if !cfg.LogAppendTime {
		if cfg.TimestampBeforeMaxMs >= 0 && h.MaxTimestamp >= 0 && now-h.FirstTimestamp > cfg.TimestampBeforeMaxMs {
			return fmt.Errorf("%w: timestamp %d is more than %d ms before the broker's clock",
				ErrInvalidTimestamp, h.FirstTimestamp, cfg.TimestampBeforeMaxMs)
		}
		if cfg.TimestampAfterMaxMs >= 0 && h.MaxTimestamp-now > cfg.TimestampAfterMaxMs {
			return fmt.Errorf("%w: timestamp %d is more than %d ms after the broker's clock",
				ErrInvalidTimestamp, h.MaxTimestamp, cfg.TimestampAfterMaxMs)
		}
	}
	return nil
}

// AppendChecked appends a record set Check accepted, as Append does.
func (p *Partition) AppendChecked(c Checked) (AppendResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.fenceLocked(AnyEpoch); err != nil {
		return AppendResult{}, err
	}
	return p.appendCheckedLocked(c, originClient)
}

// AppendCheckedInEpoch is AppendInEpoch for a record set Check accepted.
func (p *Partition) AppendCheckedInEpoch(epoch int32, c Checked, acksAll bool) (AppendResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkAppendLocked(epoch, acksAll); err != nil {
		return AppendResult{}, err
	}
	return p.appendCheckedLocked(c, originClient)
}

// appendCheckedLocked appends c; the caller holds mu and checked the
// leadership. A record set checked against a config replaced since is
// checked again under the lock (a topic config change racing a produce).
func (p *Partition) appendCheckedLocked(c Checked, origin appendOrigin) (AppendResult, error) {
	if c.IsZero() {
		return AppendResult{}, fmt.Errorf("%w: no record batch", ErrCorruptMessage)
	}
	if c.gen != p.cfgGen {
		again, err := p.check(c.records, p.cfg, nil, 0)
		if err != nil {
			return AppendResult{}, err
		}
		again.gen = p.cfgGen
		c = again
	}
	cfg := p.cfg
	res := AppendResult{BaseOffset: -1, LogAppendTime: -1}
	n := c.batches()
	// A duplicate is only recognised for a request holding one batch, which
	// is what idempotent clients send.
	if n == 1 {
		dup, err := p.producers.check(c.first.Header, origin)
		if err != nil {
			return AppendResult{}, err
		}
		if dup != nil {
			res.BaseOffset, res.LastOffset, res.Duplicate = dup.firstOffset, dup.lastOffset, true
			res.LogStartOffset = p.log.LogStartOffset()
			return res, nil
		}
	} else {
		for i := range n {
			if c.facts(i).ProducerID >= 0 {
				return AppendResult{}, fmt.Errorf("%w: an idempotent produce must hold one batch per partition, got %d",
					ErrInvalidRecord, n)
			}
		}
	}
	var appendTime int64 = -1
	if cfg.LogAppendTime {
		appendTime = p.now().UnixMilli()
	}
	pos, recs := 0, int64(0)
	for i := range n {
		f := c.facts(i)
		batch := c.records[pos : pos+f.Size()]
		pos += f.Size()
		f.StampLeaderEpoch(batch, p.leaderEpoch)
		if appendTime >= 0 {
			f.StampLogAppendTime(batch, appendTime)
		}
		base, err := p.log.AppendChecked(batch, *f)
		if err != nil {
			return AppendResult{}, fmt.Errorf("%w: %v", ErrStorage, err)
		}
		f.BaseOffset = base
		p.producers.update(f.Header)
		if res.BaseOffset < 0 {
			res.BaseOffset = base
		}
		res.LastOffset = f.LastOffset()
		recs += int64(f.NumRecords)
	}
	p.snapDirty = true
	p.traffic.add(int64(len(c.records)), recs)
	res.LogAppendTime = appendTime
	res.LogStartOffset = p.log.LogStartOffset()
	p.advanceHighWatermarkLocked(true)
	return res, nil
}
