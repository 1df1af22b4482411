package abi

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

func TestBatchRoundTrip(t *testing.T) {
	b := &interceptor.Batch{Topic: "orders", Partition: 3, Principal: auth.User("alice"), Records: []interceptor.Record{
		{Key: []byte("k"), Value: []byte(`{"a":1}`), Headers: []interceptor.Header{{Key: "h1", Value: []byte("v")}, {Key: "h2"}}, Timestamp: 1700000000000},
		{Value: []byte{}, OffsetDelta: 1, Timestamp: 1700000000005},
		{Key: []byte("k3"), Headers: []interceptor.Header{{Key: "h3", Value: []byte("x")}}, OffsetDelta: 2},
	}}
	buf := make([]byte, BatchSize(b))
	if n := PutBatch(buf, b); n != len(buf) {
		t.Fatalf("wrote %d of %d", n, len(buf))
	}
	var d BatchDecoder
	got, err := d.Decode(buf, len(b.Records))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Fatalf("got %+v\nwant %+v", got, b)
	}
	for cut := 0; cut < len(buf); cut++ {
		if _, err := d.Decode(buf[:cut], len(b.Records)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
	if _, err := d.Decode(buf, 4); !errors.Is(err, ErrMalformed) {
		t.Fatalf("count too high: %v", err)
	}
}

func TestDecisionRoundTrip(t *testing.T) {
	for _, want := range []interceptor.Decision{
		{Action: interceptor.Accept},
		{Action: interceptor.Reject, Message: "bad", Errors: []interceptor.RecordError{{Index: 1, Message: "/qty: missing"}}},
		{Action: interceptor.Reject, Message: "whole batch"},
		{Action: interceptor.Rewrite, Records: []interceptor.Record{{Key: []byte("k"), Value: []byte("v"), Headers: []interceptor.Header{{Key: "h", Value: []byte("x")}}}, {}}},
	} {
		buf := make([]byte, DecisionSize(&want))
		if n := PutDecision(buf, &want); n != len(buf) {
			t.Fatalf("%v: wrote %d of %d", want.Action, n, len(buf))
		}
		got, err := DecodeDecision(buf, len(want.Records))
		if err != nil {
			t.Fatalf("%v: %v", want.Action, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
		for cut := 0; cut < len(buf); cut++ {
			if _, err := DecodeDecision(buf[:cut], len(want.Records)); !errors.Is(err, ErrMalformed) {
				t.Fatalf("%v cut at %d: %v", want.Action, cut, err)
			}
		}
	}
	garbage := []byte{9, 1, 2, 3}
	if _, err := DecodeDecision(garbage, 1); !errors.Is(err, ErrMalformed) {
		t.Fatalf("unknown action: %v", err)
	}
	huge := make([]byte, 9)
	huge[0] = byte(interceptor.Reject)
	binary.LittleEndian.PutUint32(huge[1:], 0x7fffffff)
	if _, err := DecodeDecision(huge, 1); !errors.Is(err, ErrMalformed) {
		t.Fatalf("huge message length: %v", err)
	}
}
