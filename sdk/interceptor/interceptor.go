// Package interceptor is the contract of a record interceptor: a function
// the broker calls once per produced batch, after the batch was validated
// and before it is appended, with the batch's decoded records. It answers
// accept, reject (the whole batch, or listed records, with messages) or
// rewrite (new keys, values and headers for the same number of records).
// The types are plain data so that the WASM ABI and the go-plugin protocol
// carry them unchanged. Fallback rules (on_error), timeouts and statistics
// are the broker's, never the interceptor's.
//
// The same contract serves a fetch interceptor (topic config
// gregor.interceptor.fetch), called once per data batch a consumer fetches,
// with the consumer's principal: accept sends the batch as stored, rewrite
// sends the new keys, values and headers, and reject leaves the listed
// records out (all of the batch's when none is listed), their offsets left
// as gaps.
package interceptor

import (
	"context"
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/auth"
)

// Header is one record header; Value is nil for a null value.
type Header struct {
	Key   string
	Value []byte
}

// Record is one record of a batch. Key and Value are nil when null.
// Timestamp is the record's timestamp in milliseconds (the batch's first
// timestamp plus the record's delta) and OffsetDelta its position in the
// batch. A rewrite may change Key, Value and Headers only.
type Record struct {
	Key, Value  []byte
	Headers     []Header
	Timestamp   int64
	OffsetDelta int32
}

// Batch is what an interceptor sees of one produced batch. Its slices are
// valid only during the call: copy anything kept.
type Batch struct {
	Topic     string
	Partition int32
	Principal auth.Principal
	Records   []Record
}

// Action is an interceptor's answer.
type Action int8

// Actions.
const (
	Accept  Action = 0 // append the batch as produced
	Reject  Action = 1 // append nothing; the producer gets INVALID_RECORD
	Rewrite Action = 2 // append Decision.Records in place of the batch's
)

func (a Action) String() string {
	switch a {
	case Accept:
		return "accept"
	case Reject:
		return "reject"
	case Rewrite:
		return "rewrite"
	}
	return fmt.Sprintf("action(%d)", int8(a))
}

// RecordError names one rejected record: its index in the batch (the
// record's offset delta) and why.
type RecordError struct {
	Index   int32
	Message string
}

// Decision is an interceptor's answer for one batch.
type Decision struct {
	Action Action
	// Message explains a rejection; it reaches the producer as the
	// partition's error message.
	Message string
	// Errors lists the rejected records of a Reject (empty rejects the
	// whole batch). Kafka appends none of a batch with a bad record, so a
	// listed rejection still rejects the batch; the list reaches the
	// producer as the response's record errors.
	Errors []RecordError
	// Records replace the batch's records for a Rewrite, one for one.
	Records []Record
}

// AcceptBatch accepts a batch unchanged.
func AcceptBatch() Decision { return Decision{Action: Accept} }

// RejectBatch rejects a whole batch with a message.
func RejectBatch(msg string) Decision { return Decision{Action: Reject, Message: msg} }

// RejectRecords rejects a batch for the listed records.
func RejectRecords(msg string, errs ...RecordError) Decision {
	return Decision{Action: Reject, Message: msg, Errors: errs}
}

// RewriteBatch replaces the batch's records.
func RewriteBatch(records []Record) Decision { return Decision{Action: Rewrite, Records: records} }

// Interceptor intercepts produced batches. Implementations must be safe for
// concurrent use; an error (rather than a Reject) means the interceptor
// failed, and the broker applies its on_error policy.
type Interceptor interface {
	InterceptProduce(ctx context.Context, b *Batch) (Decision, error)
}

// Func adapts a function to Interceptor.
type Func func(ctx context.Context, b *Batch) (Decision, error)

// InterceptProduce implements Interceptor.
func (f Func) InterceptProduce(ctx context.Context, b *Batch) (Decision, error) { return f(ctx, b) }

// ErrBadDecision is wrapped by Check's errors.
var ErrBadDecision = errors.New("interceptor: bad decision")

// Check reports a decision that does not fit its batch of n records: an
// unknown action, a rewrite with another record count, a record error
// outside the batch.
func Check(d *Decision, n int) error {
	switch d.Action {
	case Accept:
	case Reject:
		for _, e := range d.Errors {
			if e.Index < 0 || int(e.Index) >= n {
				return fmt.Errorf("%w: record error for index %d of a batch of %d", ErrBadDecision, e.Index, n)
			}
		}
	case Rewrite:
		if len(d.Records) != n {
			return fmt.Errorf("%w: rewrite returned %d records for a batch of %d", ErrBadDecision, len(d.Records), n)
		}
	default:
		return fmt.Errorf("%w: unknown action %d", ErrBadDecision, int8(d.Action))
	}
	return nil
}
