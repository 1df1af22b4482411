package plugins

import (
	"context"
	"errors"
	"testing"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
)

func TestInterceptorPlugin(t *testing.T) {
	cfg, _, _ := testConfig(t, sdkplugin.KindInterceptor, `{}`)
	ic, err := OpenInterceptor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ic.Close() })
	ctx := context.Background()
	batch := func(values ...[]byte) *interceptor.Batch {
		b := &interceptor.Batch{Topic: "t", Principal: auth.User("bob")}
		for i, v := range values {
			b.Records = append(b.Records, interceptor.Record{Key: []byte{'k'}, Value: v, Timestamp: int64(100 + i), OffsetDelta: int32(i),
				Headers: []interceptor.Header{{Key: "h", Value: nil}}})
		}
		return b
	}

	d, err := ic.InterceptProduce(ctx, batch([]byte("abc"), nil, []byte{}))
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != interceptor.Rewrite || len(d.Records) != 3 || string(d.Records[0].Value) != "ABC" ||
		d.Records[1].Value != nil || d.Records[2].Value == nil || len(d.Records[2].Value) != 0 ||
		d.Records[0].Headers[0].Value != nil || d.Records[2].Timestamp != 102 || d.Records[2].OffsetDelta != 2 {
		t.Fatalf("rewrite %+v", d)
	}

	d, err = ic.InterceptProduce(ctx, batch([]byte("ok"), []byte("reject")))
	if err != nil || d.Action != interceptor.Reject || len(d.Errors) != 1 || d.Errors[0].Index != 1 || d.Message != "asked to reject" {
		t.Fatalf("reject: %+v, %v", d, err)
	}

	if _, err := ic.InterceptProduce(ctx, batch([]byte("ok"), []byte("shrink"))); !errors.Is(err, ErrExtension) || !errors.Is(err, interceptor.ErrBadDecision) {
		t.Fatalf("count-changing rewrite: %v", err)
	}
	for _, v := range []string{"garbage", "badindex"} {
		if _, err := ic.InterceptProduce(ctx, batch([]byte("ok"), []byte(v))); !errors.Is(err, ErrExtension) || !errors.Is(err, interceptor.ErrBadDecision) {
			t.Fatalf("%s answer: %v", v, err)
		}
	}
	if _, err := ic.InterceptProduce(ctx, batch([]byte("error"))); !errors.Is(err, ErrExtension) {
		t.Fatalf("failing interceptor: %v", err)
	}
	if _, err := ic.InterceptProduce(ctx, batch([]byte("crash"))); err == nil || errors.Is(err, ErrExtension) {
		t.Fatalf("crashing plugin: %v", err)
	}
}
