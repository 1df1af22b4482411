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
)

// TestInterceptorPluginHostile runs go-plugin interceptors (the host's
// test plugin) that crash mid-call, hang past timeout_ms, answer an
// unknown action, a record error outside the batch, or a rewrite with
// another record count. Under on_error = "reject" each fails its produce
// with UNKNOWN_SERVER_ERROR and a message naming the interceptor's
// failure; under "accept" the batch lands as produced. As fetch
// interceptors they withhold the records under "reject" and send them as
// stored under "accept". A crashed plugin is started again and rewrites
// again; the broker keeps serving throughout.
func TestInterceptorPluginHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	bin := buildGoBinary(t, "plugins/testdata/testplugin")
	b := startExtBroker(t, fmt.Sprintf("[extensions.up]\nkind = \"interceptor\"\nexec = %q\ntimeout_ms = 500\n\n"+
		"[extensions.up-accept]\nkind = \"interceptor\"\nexec = %q\ntimeout_ms = 500\non_error = \"accept\"\n", bin, bin))
	for _, name := range []string{"up", "up-accept"} {
		ic := name
		createTopic(t, b.Kafka, "t-"+name, 1, map[string]*string{"gregor.interceptor.produce": &ic})
	}
	createTopic(t, b.Kafka, "plain", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.RecordRetries(1), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(topic, v string) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr()
	}
	// rewritten waits until the plugin rewrites again (after a restart).
	rewritten := func(topic string) {
		t.Helper()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			sp := rawProduce(t, ctx, b.Kafka, topic, "abc")
			if sp.ErrorCode == 0 {
				return
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				t.Fatalf("%s: the plugin did not come back: error %d %q", topic, sp.ErrorCode, deref(sp.ErrorMessage))
			}
		}
	}

	if err := produce("t-up", "abc"); err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	for _, tc := range []struct{ value, text string }{
		{"garbage", "unknown action 9"},
		{"badindex", "record error for index 99 of a batch of 1"},
		{"shrink", "rewrite returned 0 records for a batch of 1"},
		{"hang", "interceptor failed"},
		{"crash", "interceptor failed"},
	} {
		start := time.Now()
		if err := produce("t-up", tc.value); !errors.Is(err, kerr.UnknownServerError) {
			t.Fatalf("%s: err = %v, want UNKNOWN_SERVER_ERROR", tc.value, err)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Fatalf("%s: the failure took %v", tc.value, d)
		}
		sp := rawProduce(t, ctx, b.Kafka, "t-up", tc.value)
		if sp.ErrorCode != kerr.UnknownServerError.Code || sp.ErrorMessage == nil ||
			!strings.Contains(*sp.ErrorMessage, "interceptor failed") || !strings.Contains(*sp.ErrorMessage, tc.text) {
			t.Fatalf("%s: raw answer %d %q, want a message with %q", tc.value, sp.ErrorCode, deref(sp.ErrorMessage), tc.text)
		}
		if err := produce("plain", "still"); err != nil {
			t.Fatalf("after %s: a plain topic: %v", tc.value, err)
		}
		rewritten("t-up")
	}

	// on_error = "accept": the batches land as produced.
	for _, v := range []string{"garbage", "crash"} {
		if err := produce("t-up-accept", v); err != nil {
			t.Fatalf("on_error accept, %s: %v", v, err)
		}
	}
	got := consumeAll(t, b.Kafka, "t-up-accept", 2)
	if string(got[0].Value) != "garbage" || string(got[1].Value) != "crash" {
		t.Fatalf("on_error accept landed %q, %q", got[0].Value, got[1].Value)
	}
	// The same plugins as fetch interceptors: a stored record that makes
	// the plugin crash, answer garbage or change the count withholds the
	// partition's records under "reject" and sends them as stored under
	// "accept"; a record it rewrites is sent rewritten.
	fup := "up"
	createTopic(t, b.Kafka, "f-up", 1, map[string]*string{"gregor.interceptor.fetch": &fup})
	for _, v := range []string{"garbage", "shrink", "crash"} {
		for _, name := range []string{"up", "up-accept"} {
			fresh := "f-" + name + "-" + v
			ic := name
			createTopic(t, b.Kafka, fresh, 1, map[string]*string{"gregor.interceptor.fetch": &ic})
			if err := produce(fresh, v); err != nil {
				t.Fatalf("produce to %s: %v", fresh, err)
			}
			p := rawFetch(t, ctx, cl, b.Kafka, fresh, -1)
			if name == "up" && (p.ErrorCode != kerr.UnknownServerError.Code || len(p.RecordBatches) != 0) {
				t.Fatalf("%s: code %d with %d record bytes, want UNKNOWN_SERVER_ERROR and none", fresh, p.ErrorCode, len(p.RecordBatches))
			}
			if got := fetchedValues(t, p.RecordBatches); name == "up-accept" && (p.ErrorCode != 0 || len(got) != 1 || got[0] != v) {
				t.Fatalf("%s: code %d, values %q, want the stored record", fresh, p.ErrorCode, got)
			}
		}
	}
	if err := produce("f-up", "abc"); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for { // the crashed plugin comes back and masks again
		p := rawFetch(t, ctx, cl, b.Kafka, "f-up", -1)
		if got := fetchedValues(t, p.RecordBatches); p.ErrorCode == 0 && len(got) == 1 && got[0] == "ABC" {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("f-up: code %d, want the rewritten record once the plugin is back", p.ErrorCode)
		}
	}

	// What landed on the rejecting topic: only the rewrites.
	got = consumeAll(t, b.Kafka, "t-up", 6)
	for _, r := range got {
		if string(r.Value) != "ABC" {
			t.Fatalf("t-up holds %q", r.Value)
		}
	}
}
