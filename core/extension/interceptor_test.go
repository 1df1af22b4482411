package extension

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

func interceptorSet(t *testing.T, decl config.Extension, impl interceptor.Interceptor) *Interceptor {
	t.Helper()
	cfg := config.Default()
	decl.Kind, decl.WASM = config.KindInterceptor, "x.wasm"
	cfg.Extensions = map[string]config.Extension{"check": decl}
	s, err := NewSetWith(&cfg, nil, nil, map[string]interceptor.Interceptor{"check": impl}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ic, err := s.TopicInterceptor(map[string]string{ConfigInterceptProduce: "check"})
	if err != nil || ic == nil {
		t.Fatalf("TopicInterceptor: %v, %v", ic, err)
	}
	if none, err := s.TopicInterceptor(map[string]string{ConfigInterceptProduce: "none"}); none != nil || err != nil {
		t.Fatalf("none: %v, %v", none, err)
	}
	if _, err := s.TopicInterceptor(map[string]string{ConfigInterceptProduce: "nope"}); err == nil || !strings.Contains(err.Error(), "no such extension") {
		t.Fatalf("undeclared: %v", err)
	}
	return ic
}

// idempotentBatch is a compressed batch as an idempotent producer writes it.
func idempotentBatch(t *testing.T, values ...string) []byte {
	t.Helper()
	recs := make([]record.Record, len(values))
	for i, v := range values {
		recs[i] = record.Record{Key: []byte{'k', byte('0' + i)}, Value: []byte(v), TimestampDelta: int64(i * 10)}
	}
	b, err := record.Encode(record.BatchSpec{Codec: record.CodecZstd, FirstTimestamp: 1700000000000, ProducerID: 42, ProducerEpoch: 3, BaseSequence: 17}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInterceptProducedRewriteKeepsProducerState(t *testing.T) {
	var seen []interceptor.Batch
	upper := interceptor.Func(func(_ context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
		seen = append(seen, *b)
		out := make([]interceptor.Record, len(b.Records))
		for i, r := range b.Records {
			out[i] = interceptor.Record{Key: r.Key, Value: bytes.ToUpper(r.Value), Headers: []interceptor.Header{{Key: "checked", Value: []byte("yes")}}}
		}
		return interceptor.RewriteBatch(out), nil
	})
	ic := interceptorSet(t, config.Extension{}, upper)
	// A control batch first: it must not reach the interceptor.
	ctrl, err := record.Encode(record.BatchSpec{Control: true, Transactional: true, ProducerID: 42, FirstTimestamp: 1}, []record.Record{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	data := idempotentBatch(t, "a", "b", "c")
	set := append(append([]byte{}, ctrl...), data...)
	var p Produced
	p.MaxDecompressed = 1 << 20
	if err := p.Decode(set); err != nil {
		t.Fatal(err)
	}
	out, err := InterceptProduced(context.Background(), ic, &p, set, "orders", 2, auth.User("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || len(seen[0].Records) != 3 || seen[0].Principal != auth.User("alice") || seen[0].Partition != 2 ||
		seen[0].Records[2].Timestamp != 1700000000020 || seen[0].Records[2].OffsetDelta != 2 {
		t.Fatalf("interceptor saw %+v", seen)
	}
	if !bytes.Equal(out[:len(ctrl)], ctrl) {
		t.Fatal("the control batch changed")
	}
	it := record.Batches(out[len(ctrl):])
	if !it.Next() {
		t.Fatalf("no rewritten batch: %v", it.Err())
	}
	h := it.Header()
	if h.ProducerID != 42 || h.ProducerEpoch != 3 || h.BaseSequence != 17 || h.Codec() != record.CodecZstd || h.NumRecords != 3 || h.FirstTimestamp != 1700000000000 {
		t.Fatalf("rewritten header %+v", h)
	}
	if _, err := record.Validate(it.Batch(), 1<<20); err != nil {
		t.Fatalf("rewritten batch does not validate: %v", err)
	}
	var vals []string
	record.Records(it.Batch(), 1<<20, func(r record.Record) error {
		vals = append(vals, string(r.Value)+"@"+string(rune('0'+r.TimestampDelta/10))+":"+r.Headers[0].Key)
		return nil
	})
	if strings.Join(vals, ",") != "A@0:checked,B@1:checked,C@2:checked" {
		t.Fatalf("rewritten records %v", vals)
	}
}

func TestInterceptorOnError(t *testing.T) {
	failing := interceptor.Func(func(context.Context, *interceptor.Batch) (interceptor.Decision, error) {
		return interceptor.Decision{}, errors.New("guest trapped")
	})
	shrinking := interceptor.Func(func(_ context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
		return interceptor.RewriteBatch(b.Records[:1]), nil // changes the count
	})
	slow := interceptor.Func(func(ctx context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
		<-ctx.Done()
		return interceptor.Decision{}, ctx.Err()
	})
	rejecting := interceptor.Func(func(_ context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
		return interceptor.RejectRecords("bad value", interceptor.RecordError{Index: 1, Message: "/qty: missing"}), nil
	})
	for _, tc := range []struct {
		name     string
		impl     interceptor.Interceptor
		onError  string
		timeout  int64
		wantErr  error // nil: the batch is appended unchanged
		wantText string
	}{
		{"trap, reject", failing, "", 0, ErrInterceptFailed, "interceptor check: guest trapped"},
		{"trap, accept", failing, config.OnErrorAccept, 0, nil, ""},
		{"count-changing rewrite, reject", shrinking, config.OnErrorReject, 0, interceptor.ErrBadDecision, "rewrite returned 1 records for a batch of 3"},
		{"count-changing rewrite, accept", shrinking, config.OnErrorAccept, 0, nil, ""},
		{"timeout, reject", slow, "", 20, ErrInterceptFailed, "context deadline exceeded"},
		{"rejection is not a failure", rejecting, config.OnErrorAccept, 0, nil, "interceptor check rejected the batch: bad value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ic := interceptorSet(t, config.Extension{OnError: tc.onError, TimeoutMs: tc.timeout}, tc.impl)
			set := idempotentBatch(t, "a", "b", "c")
			var p Produced
			p.MaxDecompressed = 1 << 20
			if err := p.Decode(set); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := InterceptProduced(context.Background(), ic, &p, set, "orders", 0, auth.Anonymous)
			if time.Since(start) > 10*time.Second {
				t.Fatal("the time limit did not stop the call")
			}
			var rej *RejectedError
			switch {
			case tc.name == "rejection is not a failure":
				if !errors.As(err, &rej) || err.Error() != tc.wantText || len(rej.Errors) != 1 || rej.Errors[0].Index != 1 {
					t.Fatalf("err = %v", err)
				}
			case tc.wantErr == nil:
				if err != nil || !bytes.Equal(out, set) {
					t.Fatalf("err = %v; batch changed: %v", err, !bytes.Equal(out, set))
				}
			default:
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantText) {
					t.Fatalf("err = %v, want %v with %q", err, tc.wantErr, tc.wantText)
				}
			}
			snap := ic.stats.Snapshot()
			if snap.Calls != 1 {
				t.Errorf("calls %d", snap.Calls)
			}
			if tc.wantErr != nil && snap.Errors != 1 || tc.onError == config.OnErrorAccept && tc.name != "rejection is not a failure" && snap.Fallbacks != 1 {
				t.Errorf("stats %+v", snap)
			}
		})
	}
}
