package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gregorbroker/gregor/sdk/interceptor"
)

// Config is the extension's `config` table in broker.toml.
type Config struct {
	// AllowedIDs are the schema ids (as Schema Registry numbers them) a
	// record may carry.
	AllowedIDs []int64 `json:"allowed_ids"`
	// Keys makes non-null keys follow the same rule as values.
	Keys bool `json:"keys"`
}

// headerLen is the wire format's header: the magic byte and the id.
const headerLen = 5

// Checker decides batches. It only reads its fields, so it is safe for
// concurrent use.
type Checker struct {
	allowed map[int32]bool
	list    string // the allowed ids for messages, "1, 7, 42"
	keys    bool
}

// New checks the config and builds the checker.
func New(cfg Config) (*Checker, error) {
	if len(cfg.AllowedIDs) == 0 {
		return nil, errors.New("config: allowed_ids must list at least one schema id (none would reject every record)")
	}
	c := &Checker{allowed: make(map[int32]bool, len(cfg.AllowedIDs)), keys: cfg.Keys}
	ids := slices.Clone(cfg.AllowedIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	text := make([]string, len(ids))
	for i, id := range ids {
		if id < 0 || id > 1<<31-1 {
			return nil, fmt.Errorf("config: allowed_ids: %d is not a schema id (0 to 2147483647)", id)
		}
		c.allowed[int32(id)] = true
		text[i] = strconv.FormatInt(id, 10)
	}
	c.list = strings.Join(text, ", ")
	return c, nil
}

// check says why a serialized key or value (what names which) is not in
// the wire format with an allowed schema id, or returns nil.
func (c *Checker) check(b []byte, what string) error {
	if len(b) < headerLen {
		return fmt.Errorf("%s is not in the Confluent wire format: %d bytes, shorter than the 5-byte header", what, len(b))
	}
	if b[0] != 0 {
		return fmt.Errorf("%s is not in the Confluent wire format: magic byte %d, want 0", what, b[0])
	}
	id := int32(binary.BigEndian.Uint32(b[1:headerLen]))
	if !c.allowed[id] {
		return fmt.Errorf("%s schema id %d is not allowed (allowed: %s)", what, id, c.list)
	}
	return nil
}

// Decide accepts a batch whose records all pass, and otherwise rejects
// it, listing every failing record with its first failure.
func (c *Checker) Decide(b *interceptor.Batch) interceptor.Decision {
	var errs []interceptor.RecordError
	for i, r := range b.Records {
		var err error
		if r.Value != nil {
			err = c.check(r.Value, "value")
		}
		if err == nil && c.keys && r.Key != nil {
			err = c.check(r.Key, "key")
		}
		if err != nil {
			errs = append(errs, interceptor.RecordError{Index: int32(i), Message: err.Error()})
		}
	}
	if len(errs) == 0 {
		return interceptor.AcceptBatch()
	}
	msg := fmt.Sprintf("schema id check failed: record %d: %s", errs[0].Index, errs[0].Message)
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more records)", len(errs)-1)
	}
	return interceptor.RejectRecords(msg, errs...)
}
