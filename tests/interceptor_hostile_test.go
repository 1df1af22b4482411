package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/hooks/hookstest"
)

// TestInterceptorRewriteAndHostileModules runs a broker with one rewriting
// and several misbehaving WASM interceptors: rewritten batches from
// franz-go's idempotent producer land re-encoded (zstd) with every
// sequence accepted; a looping module is stopped by its time limit, a
// module that exits, runs out of memory or changes the record count fails
// its produce under on_error = "reject" with a clear error, and lets the
// batch through unchanged under "accept"; and the broker keeps serving.
func TestInterceptorRewriteAndHostileModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module")
	}
	wasm := hookstest.BuildGo(t, "../hooks/testdata/intercept")
	var exts strings.Builder
	decl := func(name, mode, extra string) {
		fmt.Fprintf(&exts, "[extensions.%s]\nkind = \"interceptor\"\nwasm = %q\nconfig = { mode = %q }\n%s\n", name, wasm, mode, extra)
	}
	decl("upper", "upper", "")
	decl("loop", "loop", "timeout_ms = 200\n")
	decl("exit", "exit", "")
	decl("oom", "oom", "memory_limit_pages = 256\n")
	decl("shrink", "shrink", "")
	decl("exit-accept", "exit", "on_error = \"accept\"\n")
	b := startExtBroker(t, exts.String())
	for _, name := range []string{"upper", "loop", "exit", "oom", "shrink", "exit-accept"} {
		ic := name
		createTopic(t, b.Kafka, "t-"+name, 1, map[string]*string{"gregor.interceptor.produce": &ic})
	}
	createTopic(t, b.Kafka, "plain", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.RecordRetries(1), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// Rewrites, several batches in a row from one idempotent producer.
	for i := range 5 {
		rs := []*kgo.Record{{Topic: "t-upper", Value: []byte(fmt.Sprintf("hello-%d", i))}, {Topic: "t-upper", Value: []byte(fmt.Sprintf("world-%d", i))}}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("batch %d to the rewriting interceptor: %v", i, err)
		}
	}
	got := consumeAll(t, b.Kafka, "t-upper", 10)
	for i, r := range got {
		want := fmt.Sprintf("%s-%d", []string{"HELLO", "WORLD"}[i%2], i/2)
		if string(r.Value) != want || len(r.Headers) != 1 || r.Headers[0].Key != "intercepted" || string(r.Headers[0].Value) != "ANONYMOUS" {
			t.Fatalf("record %d: %q %v, want %q with the intercepted header", i, r.Value, r.Headers, want)
		}
	}

	for _, tc := range []struct{ topic, text string }{
		{"t-loop", "call timed out"},
		{"t-exit", "guest exited"},
		{"t-oom", "memory"},
		{"t-shrink", "guest returned code 3"},
	} {
		start := time.Now()
		err := cl.ProduceSync(ctx, &kgo.Record{Topic: tc.topic, Value: []byte("x")}).FirstErr()
		if !errors.Is(err, kerr.UnknownServerError) {
			t.Fatalf("%s: err = %v, want UNKNOWN_SERVER_ERROR", tc.topic, err)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Fatalf("%s: the failure took %v", tc.topic, d)
		}
		// The error message, as the raw response carries it.
		msg := rawProduceMessage(t, ctx, b.Kafka, tc.topic)
		// On a loaded machine the looping module's fresh instance may
		// reach the request's deadline while it starts: a timeout too.
		timedOut := tc.topic == "t-loop" && strings.Contains(msg, "deadline exceeded")
		if !(strings.Contains(msg, tc.text) || timedOut) || !strings.Contains(msg, "interceptor failed") {
			t.Fatalf("%s: message %q lacks %q", tc.topic, msg, tc.text)
		}
	}

	// on_error = "accept" appends the batch as produced.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t-exit-accept", Value: []byte("as-is")}).FirstErr(); err != nil {
		t.Fatalf("on_error accept: %v", err)
	}
	if r := consumeAll(t, b.Kafka, "t-exit-accept", 1); string(r[0].Value) != "as-is" {
		t.Fatalf("on_error accept landed %q", r[0].Value)
	}
	// The broker keeps serving.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "plain", Value: []byte("still")}).FirstErr(); err != nil {
		t.Fatalf("produce after the hostile modules: %v", err)
	}
}
