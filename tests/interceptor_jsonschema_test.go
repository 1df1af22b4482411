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

const orderSchemaTOML = `'''
{"type": "object", "required": ["id", "qty"],
 "properties": {"id": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}}
'''`

// TestInterceptorJSONSchemaRejectsInvalidRecords produces to a topic whose
// produce interceptor is examples/interceptor-jsonschema: franz-go's valid
// records land, an invalid one fails with INVALID_RECORD, the raw Produce
// response names the failing field in its error message and record errors,
// and nothing of a rejected batch is appended.
func TestInterceptorJSONSchemaRejectsInvalidRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module")
	}
	wasm := hookstest.BuildGo(t, "../examples/interceptor-jsonschema")
	b := startExtBroker(t, fmt.Sprintf("[extensions.orders-schema]\nkind = \"interceptor\"\nwasm = %q\n\n[extensions.orders-schema.config]\nschema = %s\n", wasm, orderSchemaTOML))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic = "orders"
	ic := "orders-schema"
	createTopic(t, b.Kafka, topic, 1, map[string]*string{"gregor.interceptor.produce": &ic})

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.DefaultProduceTopic(topic), kgo.RecordRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(v string) error {
		return cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr()
	}
	if err := produce(`{"id":"o-1","qty":2}`); err != nil {
		t.Fatalf("valid record: %v", err)
	}
	if err := produce(`{"id":"o-2","qty":"two"}`); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("invalid record: err = %v, want INVALID_RECORD", err)
	}
	if err := produce(`{"id":"o-3","qty":3}`); err != nil {
		t.Fatalf("valid record after a rejection: %v", err)
	}

	// The raw response, as the Java client reports it: the top-level
	// message and one record error per failing record, by batch index.
	sp := rawProduce(t, ctx, b.Kafka, topic, `{"id":"o-4","qty":4}`, `{"id":"o-5"}`, `{"id":"o-6","qty":0}`)
	if sp.ErrorCode != kerr.InvalidRecord.Code || sp.ErrorMessage == nil || !strings.Contains(*sp.ErrorMessage, "record 1: /qty: required property is missing") {
		t.Fatalf("partition answer: code %d message %v", sp.ErrorCode, sp.ErrorMessage)
	}
	var got []string
	for _, e := range sp.ErrorRecords {
		got = append(got, fmt.Sprintf("%d %s", e.RelativeOffset, *e.ErrorMessage))
	}
	want := "1 /qty: required property is missing|2 /qty: 0 is below the minimum 1"
	if strings.Join(got, "|") != want {
		t.Fatalf("record errors %q, want %q", got, want)
	}

	// Only the two valid records landed: the rejected batches appended
	// nothing, not even their valid records.
	recs := consumeAll(t, b.Kafka, topic, 2)
	if string(recs[0].Value) != `{"id":"o-1","qty":2}` || string(recs[1].Value) != `{"id":"o-3","qty":3}` {
		t.Fatalf("landed %q, %q", recs[0].Value, recs[1].Value)
	}
	ends, err := newAdmin(t, b.Kafka).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup(topic, 0); o.Offset != 2 {
		t.Fatalf("high watermark %d, want 2", o.Offset)
	}
}
