package extension

import (
	"context"
	"fmt"
	"strings"

	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

// RejectedError is an interceptor's rejection of a produced batch: the
// produce path answers INVALID_RECORD with Message and one record error
// per entry of Errors (indexes in the record set, as Produce v8+ reports
// them). Nothing of the record set is appended.
type RejectedError struct {
	Interceptor string
	Message     string
	Errors      []interceptor.RecordError
}

func (e *RejectedError) Error() string {
	msg := e.Message
	if msg == "" && len(e.Errors) > 0 {
		msg = e.Errors[0].Message
	}
	if msg == "" {
		msg = "rejected"
	}
	return fmt.Sprintf("interceptor %s rejected the batch: %s", e.Interceptor, msg)
}

// InterceptProduced calls ic once per data batch of set (decoded from
// recordSet) and returns the record set to append: recordSet itself when
// every batch was accepted, or a copy with rewritten batches re-encoded
// with their codec, base offset, producer id, epoch and base sequence, so
// idempotent and transactional state stays valid. A rejection is a
// *RejectedError; a failed interceptor under on_error = reject wraps
// ErrInterceptFailed. Control batches are never passed to ic.
func InterceptProduced(ctx context.Context, ic *Interceptor, set *Produced, recordSet []byte, topic string, partition int32, principal auth.Principal) ([]byte, error) {
	var out []byte // nil until a batch is rewritten
	copied := 0    // recordSet bytes already in out
	for _, pb := range set.Batches {
		if pb.Header.IsControl() || pb.N == 0 {
			continue
		}
		recs := set.Records[pb.First : pb.First+pb.N]
		d, err := ic.Intercept(ctx, &interceptor.Batch{Topic: topic, Partition: partition, Principal: principal, Records: recs})
		if err != nil {
			return nil, err
		}
		switch d.Action {
		case interceptor.Accept:
		case interceptor.Reject:
			rej := &RejectedError{Interceptor: ic.Name, Message: d.Message}
			for _, e := range d.Errors {
				rej.Errors = append(rej.Errors, interceptor.RecordError{Index: int32(pb.Index) + e.Index, Message: e.Message})
			}
			if rej.Message == "" && len(rej.Errors) == 0 {
				rej.Message = "rejected by interceptor " + ic.Name
			}
			return nil, rej
		case interceptor.Rewrite:
			batch, err := reencode(pb.Header, recs, d.Records)
			if err != nil {
				return nil, fmt.Errorf("extension: interceptor %s: rewrite of topic %s partition %d: %w", ic.Name, topic, partition, err)
			}
			if out == nil {
				out = make([]byte, 0, len(recordSet)+len(batch))
			}
			out = append(out, recordSet[copied:pb.Pos]...)
			out = append(out, batch...)
			copied = pb.Pos + pb.Len
		}
	}
	if out == nil {
		return recordSet, nil
	}
	return append(out, recordSet[copied:]...), nil
}

// reencode builds a batch with h's header fields and the rewritten
// records, keeping each original record's timestamp.
func reencode(h record.Header, orig, rewritten []interceptor.Record) ([]byte, error) {
	return encodeLike(h, rewritten, orig, false)
}

// encodeLike encodes recs as one batch with h's header fields (codec,
// producer facts, epochs, timestamps), each record at the timestamp of the
// same-index record of times. keepOffsets keeps each record's own offset
// delta and h's last offset delta, so records left out stay gaps;
// otherwise offsets are consecutive as in a produced batch.
func encodeLike(h record.Header, recs, times []interceptor.Record, keepOffsets bool) ([]byte, error) {
	out := make([]record.Record, len(recs))
	for i, r := range recs {
		rec := record.Record{Key: r.Key, Value: r.Value, TimestampDelta: times[i].Timestamp - h.FirstTimestamp}
		if keepOffsets {
			rec.OffsetDelta = r.OffsetDelta
		}
		if h.LogAppendTime() {
			rec.TimestampDelta = 0
		}
		for _, hd := range r.Headers {
			rec.Headers = append(rec.Headers, record.RecordHeader{Key: hd.Key, Value: hd.Value})
		}
		out[i] = rec
	}
	spec := record.BatchSpec{
		BaseOffset:           h.BaseOffset,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		Codec:                h.Codec(),
		Transactional:        h.IsTransactional(),
		LogAppendTime:        h.LogAppendTime(),
		FirstTimestamp:       h.FirstTimestamp,
		MaxTimestamp:         h.MaxTimestamp,
		ProducerID:           h.ProducerID,
		ProducerEpoch:        h.ProducerEpoch,
		BaseSequence:         h.BaseSequence,
	}
	if keepOffsets {
		spec.KeepOffsetDeltas, spec.LastOffsetDelta = true, h.LastOffsetDelta
	}
	return record.Encode(spec, out)
}

// RecordErrorSummary joins the first record errors for a log line.
func RecordErrorSummary(errs []interceptor.RecordError) string {
	var b strings.Builder
	for i, e := range errs {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(errs)-3)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "record %d: %s", e.Index, e.Message)
	}
	return b.String()
}
