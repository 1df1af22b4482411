package tests

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/hooks/hookstest"
)

// buildGoBinary builds the package at dir (relative to the repository
// root) into a temporary directory and returns the binary's path.
func buildGoBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(dir))
	build := exec.Command(hookstest.GoTool(), "build", "-o", bin, "./"+dir)
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", dir, err, out)
	}
	return bin
}

// confluentWire is a value in Confluent's wire format: magic byte 0, the
// schema id in 4 bytes big-endian, the payload.
func confluentWire(id uint32, payload string) string {
	b := make([]byte, 5, 5+len(payload))
	binary.BigEndian.PutUint32(b[1:], id)
	return string(append(b, payload...))
}

// TestInterceptorSchemaIDPlugin produces to a topic whose produce
// interceptor is the go-plugin example examples/interceptor-schemaid,
// allowing schema ids 1 and 2: franz-go's records with those ids land,
// one with id 9 or not in the wire format fails with INVALID_RECORD, the
// raw Produce answer names the record and the id in its message and record
// errors, and the Java client (when its jars are cached) raises an
// InvalidRecordException naming the id.
func TestInterceptorSchemaIDPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	bin := buildGoBinary(t, "examples/interceptor-schemaid")
	b := startExtBroker(t, fmt.Sprintf("[extensions.orders-schema-ids]\nkind = \"interceptor\"\nexec = %q\n\n[extensions.orders-schema-ids.config]\nallowed_ids = [1, 2]\n", bin))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const topic = "orders"
	ic := "orders-schema-ids"
	createTopic(t, b.Kafka, topic, 1, map[string]*string{"gregor.interceptor.produce": &ic})

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.DefaultProduceTopic(topic), kgo.RecordRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(v string) error {
		return cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr()
	}
	landed := []string{confluentWire(1, `{"id":"o-1"}`)}
	if err := produce(landed[0]); err != nil {
		t.Fatalf("schema id 1: %v", err)
	}
	if err := produce(confluentWire(9, `{"id":"o-2"}`)); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("schema id 9: err = %v, want INVALID_RECORD", err)
	}
	if err := produce(`{"id":"o-3"}`); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("plain JSON: err = %v, want INVALID_RECORD", err)
	}
	landed = append(landed, confluentWire(2, `{"id":"o-4"}`))
	if err := produce(landed[1]); err != nil {
		t.Fatalf("schema id 2 after rejections: %v", err)
	}

	sp := rawProduce(t, ctx, b.Kafka, topic, confluentWire(2, "a"), confluentWire(9, "b"), confluentWire(1, "c"))
	if sp.ErrorCode != kerr.InvalidRecord.Code || sp.ErrorMessage == nil ||
		!strings.Contains(*sp.ErrorMessage, "schema id check failed: record 1: value schema id 9 is not allowed (allowed: 1, 2)") {
		t.Fatalf("partition answer: code %d message %q", sp.ErrorCode, deref(sp.ErrorMessage))
	}
	if len(sp.ErrorRecords) != 1 || sp.ErrorRecords[0].RelativeOffset != 1 || sp.ErrorRecords[0].ErrorMessage == nil ||
		*sp.ErrorRecords[0].ErrorMessage != "value schema id 9 is not allowed (allowed: 1, 2)" {
		t.Fatalf("record errors %+v", sp.ErrorRecords)
	}

	if script, ok := kafkaTools(t); ok {
		// Bytes below 0x80 and without a newline pass through the console
		// producer's lines unchanged.
		out, _ := javaProduce(t, script, b.Kafka, topic, confluentWire(7, `{"id":"j-1"}`))
		if !strings.Contains(out, "InvalidRecordException: value schema id 7 is not allowed (allowed: 1, 2)") {
			t.Fatalf("the Java client did not report the schema id:\n%s", out)
		}
		t.Logf("the Java client: %s", lastLine(out))
		landed = append(landed, confluentWire(1, `{"id":"j-2"}`))
		if out, err := javaProduce(t, script, b.Kafka, topic, landed[2]); err != nil || strings.Contains(out, "Exception") {
			t.Fatalf("the Java client's record with schema id 1: %v\n%s", err, out)
		}
	} else {
		t.Log("Apache Kafka's jars or java are missing: the Java client is not checked")
	}
	checkLanded(t, b.Kafka, topic, landed...)
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
