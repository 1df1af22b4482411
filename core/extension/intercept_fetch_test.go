package extension

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

// fetchedRecord is one record of a fetched record set, at its offset.
type fetchedRecord struct {
	offset     int64
	key, value string
	ts         int64
}

func decodeFetched(t *testing.T, set []byte) (recs []fetchedRecord, next int64) {
	t.Helper()
	it := record.Batches(set)
	for it.Next() {
		h := it.Header() // Records checks framing and CRC
		if !h.IsControl() {
			err := record.Records(it.Batch(), 1<<20, func(r record.Record) error {
				recs = append(recs, fetchedRecord{h.BaseOffset + int64(r.OffsetDelta), string(r.Key), string(r.Value), r.Timestamp(h)})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		next = h.NextOffset()
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	return recs, next
}

func fetchInterceptorSet(t *testing.T, decl config.Extension, impl interceptor.Interceptor) *Interceptor {
	t.Helper()
	cfg := config.Default()
	decl.Kind, decl.WASM = config.KindInterceptor, "x.wasm"
	cfg.Extensions = map[string]config.Extension{"mask": decl}
	s, err := NewSetWith(&cfg, nil, nil, map[string]interceptor.Interceptor{"mask": impl}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if none, err := s.TopicFetchInterceptor(map[string]string{ConfigInterceptProduce: "mask"}); none != nil || err != nil {
		t.Fatalf("a produce interceptor is no fetch interceptor: %v, %v", none, err)
	}
	if _, err := s.TopicFetchInterceptor(map[string]string{ConfigInterceptFetch: "nope"}); err == nil {
		t.Fatal("an undeclared fetch interceptor resolved")
	}
	ic, err := s.TopicFetchInterceptor(map[string]string{ConfigInterceptFetch: "mask"})
	if err != nil || ic == nil {
		t.Fatalf("TopicFetchInterceptor: %v, %v", ic, err)
	}
	return ic
}

// TestInterceptFetchedDropLeavesGap: a rewrite masks values, a listed
// rejection drops records and the kept ones keep their offsets, a batch
// with every record dropped stays as an empty batch covering its offsets,
// a control batch passes as stored, and a trailing partial batch is left
// out.
func TestInterceptFetchedDropLeavesGap(t *testing.T) {
	var principals []string
	ic := fetchInterceptorSet(t, config.Extension{}, interceptor.Func(func(_ context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
		principals = append(principals, b.Principal.Name)
		var drop []interceptor.RecordError
		out := make([]interceptor.Record, len(b.Records))
		for i, r := range b.Records {
			if bytes.HasPrefix(r.Value, []byte("secret")) {
				drop = append(drop, interceptor.RecordError{Index: int32(i), Message: "dropped"})
			}
			out[i] = interceptor.Record{Key: r.Key, Value: bytes.ToUpper(r.Value), Headers: r.Headers}
		}
		if len(drop) == len(b.Records) {
			return interceptor.RejectBatch("all secret"), nil
		}
		if len(drop) > 0 {
			return interceptor.RejectRecords("some secret", drop...), nil
		}
		return interceptor.RewriteBatch(out), nil
	}))
	a := idempotentBatch(t, "a0", "secret1", "a2") // offsets 0..2, zstd
	record.SetBaseOffset(a, 0)
	b := idempotentBatch(t, "b0", "b1") // 3..4: rewritten
	record.SetBaseOffset(b, 3)
	c := idempotentBatch(t, "secret5", "secret6") // 5..6: all dropped
	record.SetBaseOffset(c, 5)
	ctl, err := record.Encode(record.BatchSpec{BaseOffset: 7, Control: true, Transactional: true, ProducerID: 42}, []record.Record{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	d := idempotentBatch(t, "d8")
	record.SetBaseOffset(d, 8)
	set := bytes.Join([][]byte{a, b, c, ctl, d[:len(d)-3]}, nil)
	out, err := InterceptFetched(context.Background(), ic, set, "t", 0, auth.Principal{Type: "User", Name: "bob"}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	got, next := decodeFetched(t, out)
	want := []fetchedRecord{{0, "k0", "a0", 1700000000000}, {2, "k2", "a2", 1700000000020}, {3, "k0", "B0", 1700000000000}, {4, "k1", "B1", 1700000000010}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if next != 8 {
		t.Fatalf("the record set ends before offset %d, want 8 (past the emptied batch and the marker, without the partial batch)", next)
	}
	if len(principals) != 3 || principals[0] != "bob" {
		t.Fatalf("calls with principals %v, want 3 for bob (never for the control batch)", principals)
	}
	// Producer facts, codec and last offset delta survive the re-encoding.
	it := record.Batches(out)
	for it.Next() {
		h := it.Header()
		if h.IsControl() {
			if !bytes.Equal(it.Batch(), ctl) {
				t.Fatal("the control batch changed")
			}
			continue
		}
		orig, _ := record.ParseHeader(map[int64][]byte{0: a, 3: b, 5: c}[h.BaseOffset])
		if h.ProducerID != 42 || h.ProducerEpoch != 3 || h.BaseSequence != orig.BaseSequence || h.LastOffsetDelta != orig.LastOffsetDelta ||
			h.MaxTimestamp != orig.MaxTimestamp || (h.NumRecords > 0 && h.Codec() != record.CodecZstd) {
			t.Fatalf("batch at %d: header %+v, stored %+v", h.BaseOffset, h, orig)
		}
	}
}

// TestInterceptFetchedFailurePolicy: on_error = reject withholds the
// records, accept returns them as stored.
func TestInterceptFetchedFailurePolicy(t *testing.T) {
	boom := interceptor.Func(func(context.Context, *interceptor.Batch) (interceptor.Decision, error) {
		return interceptor.Decision{}, errors.New("trap")
	})
	set := idempotentBatch(t, "x")
	ic := fetchInterceptorSet(t, config.Extension{}, boom)
	if out, err := InterceptFetched(context.Background(), ic, set, "t", 0, auth.Principal{}, 1<<20); !errors.Is(err, ErrInterceptFailed) || out != nil {
		t.Fatalf("reject: %d bytes, %v", len(out), err)
	}
	ic = fetchInterceptorSet(t, config.Extension{OnError: config.OnErrorAccept}, boom)
	if out, err := InterceptFetched(context.Background(), ic, set, "t", 0, auth.Principal{}, 1<<20); err != nil || !bytes.Equal(out, set) {
		t.Fatalf("accept: %v", err)
	}
}
