package extension

import (
	"context"
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

// ConfigInterceptFetch is the topic config naming a topic's fetch
// interceptor ("none" or absent: records leave as stored, by the
// zero-copy path where the connection allows it).
const ConfigInterceptFetch = "gregor.interceptor.fetch"

// TopicFetchInterceptor is the fetch interceptor a topic picks with
// gregor.interceptor.fetch in configs: nil when it picks none. A name
// broker.toml does not declare is an error naming the config.
func (s *Set) TopicFetchInterceptor(configs map[string]string) (*Interceptor, error) {
	if s == nil {
		return nil, nil
	}
	return s.topicInterceptor(configs, ConfigInterceptFetch)
}

// InterceptFetched passes the data batches of records (read from a
// partition's log for a consumer) through ic, one call per batch, and
// returns what the consumer gets. A batch the interceptor accepts is
// returned byte for byte; a rewrite replaces the batch's keys, values and
// headers; a rejection drops the listed records (all of the batch's when
// it lists none). A batch that lost records or was rewritten is encoded
// again with its codec, base offset, leader epoch, producer id, epoch and
// base sequence, timestamps and last offset delta: the kept records keep
// their offsets, so a dropped record leaves a gap as compaction does, and
// a batch with every record dropped stays as an empty batch that still
// moves the consumer past its offsets. Control batches are returned as
// stored. A trailing partial batch (a read cut at the byte limit) is left
// out rather than returned unintercepted; the consumer fetches it again.
// A failed interceptor under on_error = reject wraps ErrInterceptFailed;
// records that do not decode fail under either policy. Failures are
// logged here, at most once a second.
func InterceptFetched(ctx context.Context, ic *Interceptor, records []byte, topic string, partition int32, principal auth.Principal, maxDecompressed int) ([]byte, error) {
	whole := 0
	it := record.Batches(records)
	for it.Next() {
		whole = it.Consumed()
	}
	if err := it.Err(); err != nil && !errors.Is(err, record.ErrTruncated) {
		return nil, ic.fetchFailed(topic, partition, err)
	}
	records = records[:whole]
	set := Produced{MaxDecompressed: maxDecompressed}
	if err := set.Decode(records); err != nil {
		return nil, ic.fetchFailed(topic, partition, err)
	}
	var out []byte // nil until a batch changes
	copied := 0    // records bytes already in out
	for _, pb := range set.Batches {
		if pb.Header.IsControl() || pb.N == 0 {
			continue
		}
		recs := set.Records[pb.First : pb.First+pb.N]
		d, err := ic.intercept(ctx, &interceptor.Batch{Topic: topic, Partition: partition, Principal: principal, Records: recs}, true)
		if err != nil {
			return nil, err
		}
		var kept []interceptor.Record
		switch d.Action {
		case interceptor.Accept:
			continue
		case interceptor.Rewrite:
			kept = d.Records
			for i := range kept {
				kept[i].Timestamp, kept[i].OffsetDelta = recs[i].Timestamp, recs[i].OffsetDelta
			}
		case interceptor.Reject:
			kept = dropListed(recs, d.Errors)
		}
		batch, err := encodeKept(pb.Header, kept)
		if err != nil {
			return nil, ic.fetchFailed(topic, partition, err)
		}
		if out == nil {
			out = make([]byte, 0, len(records))
		}
		out = append(out, records[copied:pb.Pos]...)
		out = append(out, batch...)
		copied = pb.Pos + pb.Len
	}
	if out == nil {
		return records, nil
	}
	return append(out, records[copied:]...), nil
}

// fetchFailed is the error for records the broker could not pass through
// ic (they do not decode or encode again), warned about at most once a
// second; the caller withholds the records whatever on_error says, since
// it cannot tell what the interceptor would have masked.
func (ic *Interceptor) fetchFailed(topic string, partition int32, err error) error {
	err = fmt.Errorf("extension: fetch interceptor %s: topic %s partition %d: %w", ic.Name, topic, partition, err)
	if ic.warn.allow() {
		ic.logger.Warn("fetch interceptor: records withheld", "err", err)
	}
	return err
}

// dropListed is recs without the records errs lists (every record when
// errs is empty: the whole batch was rejected).
func dropListed(recs []interceptor.Record, errs []interceptor.RecordError) []interceptor.Record {
	if len(errs) == 0 {
		return nil
	}
	drop := make([]bool, len(recs))
	for _, e := range errs {
		drop[e.Index] = true // Check bounded the index
	}
	kept := make([]interceptor.Record, 0, len(recs))
	for i, r := range recs {
		if !drop[i] {
			kept = append(kept, r)
		}
	}
	return kept
}

// encodeKept builds the batch with h's header fields holding kept, each at
// its own offset delta.
func encodeKept(h record.Header, kept []interceptor.Record) ([]byte, error) {
	return encodeLike(h, kept, kept, true)
}
