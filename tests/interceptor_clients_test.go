package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/hooks/hookstest"
)

// kcatProduce produces lines (one record each) with kcat, librdkafka's
// command-line client, and returns what it printed.
// libDir, when set, goes first on LD_LIBRARY_PATH (another librdkafka).
func kcatProduce(t *testing.T, libDir, addr, topic string, lines ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kcat", "-b", addr, "-P", "-t", topic, "-X", "message.timeout.ms=20000", "-d", "protocol")
	if libDir != "" {
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libDir)
	}
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// javaProduce produces lines (one record each) with Apache Kafka's
// kafka-console-producer, the Java client (scripts/kafka-ref.sh runs it
// from the cached jars), and returns what it printed.
func javaProduce(t *testing.T, script, addr, topic string, lines ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "kafka-console-producer", "--bootstrap-server", addr, "--topic", topic)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestInterceptorJSONSchemaKcatAndJava produces to a topic whose produce
// interceptor is examples/interceptor-jsonschema with kcat and with the
// Java client (TestInterceptorJSONSchemaRejectsInvalidRecords does so with
// franz-go): valid records land, an invalid one is refused with
// INVALID_RECORD, and the Java client's InvalidRecordException names the
// failing field. kcat reports INVALID_RECORD only, whatever librdkafka it
// runs on: its delivery report prints rd_kafka_err2str(err) (kcat 1.7.1,
// Debian's, and upstream's master alike). librdkafka reads Produce v8+
// ErrorMessage and RecordErrors since 2.4.0 (KIP-467), but hands the
// broker's words out only through rd_kafka_message_produce_errstr(),
// which kcat never calls; its debug contexts do not log them either.
// Debian 12's librdkafka 2.0.2 sends Produce v7, whose answer has neither;
// the kcat-librdkafka2 case runs the same kcat on the librdkafka 2.4+ of
// confluent-kafka's wheel (scripts/interop-deps.sh kcat-rdkafka2), which
// sends Produce v8+ and parses the answer's record errors and message.
func TestInterceptorJSONSchemaKcatAndJava(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module and runs external clients")
	}
	_, kcatErr := exec.LookPath("kcat")
	script, java := kafkaTools(t)
	if kcatErr != nil && !java {
		t.Skip("neither kcat (scripts/interop-deps.sh kcat) nor Apache Kafka's jars and java (scripts/kafka-ref.sh fetch)")
	}
	wasm := hookstest.BuildGo(t, "../examples/interceptor-jsonschema")
	b := startExtBroker(t, fmt.Sprintf("[extensions.orders-schema]\nkind = \"interceptor\"\nwasm = %q\n\n[extensions.orders-schema.config]\nschema = %s\n", wasm, orderSchemaTOML))
	ic := "orders-schema"
	var landed []string

	t.Run("kcat", func(t *testing.T) {
		if kcatErr != nil {
			t.Skip("no kcat (scripts/interop-deps.sh kcat installs it)")
		}
		createTopic(t, b.Kafka, "orders-kcat", 1, map[string]*string{"gregor.interceptor.produce": &ic})
		if out, err := kcatProduce(t, "", b.Kafka, "orders-kcat", `{"id":"k-1","qty":1}`); err != nil {
			t.Fatalf("valid record: %v\n%s", err, out)
		}
		out, err := kcatProduce(t, "", b.Kafka, "orders-kcat", `{"id":"k-2","qty":"one"}`)
		// librdkafka's words for INVALID_RECORD: kcat prints the error
		// code's text, never the broker's message (see above).
		if err == nil || !strings.Contains(out, "Delivery failed for message: Broker: Broker failed to validate record") {
			t.Fatalf("invalid record: exit %v, want a delivery failure naming INVALID_RECORD:\n%s", err, out)
		}
		if i := strings.Index(out, "Sent ProduceRequest (v"); i >= 0 {
			t.Logf("kcat: %s", out[i:i+len("Sent ProduceRequest (v")+2])
		}
		if out, err := kcatProduce(t, "", b.Kafka, "orders-kcat", `{"id":"k-3","qty":3}`); err != nil {
			t.Fatalf("valid record after a rejection: %v\n%s", err, out)
		}
		checkLanded(t, b.Kafka, "orders-kcat", `{"id":"k-1","qty":1}`, `{"id":"k-3","qty":3}`)
		landed = append(landed, "kcat")
	})

	t.Run("kcat-librdkafka2", func(t *testing.T) {
		if kcatErr != nil {
			t.Skip("no kcat (scripts/interop-deps.sh kcat installs it)")
		}
		cache := os.Getenv("GREGOR_CACHE")
		if cache == "" {
			cache = filepath.Join("..", ".cache")
		}
		lib := filepath.Join(cache, "interop", "librdkafka")
		if _, err := os.Stat(filepath.Join(lib, "librdkafka.so.1")); err != nil {
			t.Skip("no librdkafka 2.4+ (scripts/interop-deps.sh kcat-rdkafka2 links confluent-kafka's)")
		}
		createTopic(t, b.Kafka, "orders-kcat2", 1, map[string]*string{"gregor.interceptor.produce": &ic})
		if out, err := kcatProduce(t, lib, b.Kafka, "orders-kcat2", `{"id":"k-1","qty":1}`); err != nil {
			t.Fatalf("valid record: %v\n%s", err, out)
		}
		out, err := kcatProduce(t, lib, b.Kafka, "orders-kcat2", `{"id":"k-2","qty":"one"}`)
		m := regexp.MustCompile(`Sent ProduceRequest \(v(\d+),`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("kcat's protocol debug names no ProduceRequest:\n%s", out)
		}
		if v, _ := strconv.Atoi(m[1]); v < 8 {
			t.Fatalf("kcat on %s sent Produce v%d, want v8+ (record errors and message in the answer)", lib, v)
		}
		// librdkafka parsed the v8+ answer (a malformed one fails the
		// request otherwise) and kept INVALID_RECORD for the one failing
		// record; kcat prints only the code's text.
		if err == nil || !strings.Contains(out, "Delivery failed for message: Broker: Broker failed to validate record") {
			t.Fatalf("invalid record: exit %v, want a delivery failure naming INVALID_RECORD:\n%s", err, out)
		}
		t.Logf("kcat: Produce v%s", m[1])
		if out, err := kcatProduce(t, lib, b.Kafka, "orders-kcat2", `{"id":"k-3","qty":3}`); err != nil {
			t.Fatalf("valid record after a rejection: %v\n%s", err, out)
		}
		checkLanded(t, b.Kafka, "orders-kcat2", `{"id":"k-1","qty":1}`, `{"id":"k-3","qty":3}`)
		landed = append(landed, "kcat-librdkafka2")
	})

	t.Run("java", func(t *testing.T) {
		if !java {
			t.Skip("Apache Kafka's jars or java are missing (scripts/kafka-ref.sh fetch)")
		}
		createTopic(t, b.Kafka, "orders-java", 1, map[string]*string{"gregor.interceptor.produce": &ic})
		if out, err := javaProduce(t, script, b.Kafka, "orders-java", `{"id":"j-1","qty":1}`); err != nil || strings.Contains(out, "Exception") {
			t.Fatalf("valid record: %v\n%s", err, out)
		}
		out, _ := javaProduce(t, script, b.Kafka, "orders-java", `{"id":"j-2","qty":"one"}`)
		if !strings.Contains(out, "org.apache.kafka.common.InvalidRecordException: /qty: string is not of type integer") {
			t.Fatalf("invalid record: the Java client did not report INVALID_RECORD naming /qty:\n%s", out)
		}
		if out, err := javaProduce(t, script, b.Kafka, "orders-java", `{"id":"j-3","qty":3}`); err != nil || strings.Contains(out, "Exception") {
			t.Fatalf("valid record after a rejection: %v\n%s", err, out)
		}
		checkLanded(t, b.Kafka, "orders-java", `{"id":"j-1","qty":1}`, `{"id":"j-3","qty":3}`)
		landed = append(landed, "java")
	})
	t.Logf("clients checked: %v", landed)
}

// checkLanded consumes topic's partition 0 and checks that it holds
// exactly values, in order, and that its high watermark is their count.
func checkLanded(t *testing.T, addr, topic string, values ...string) {
	t.Helper()
	recs := consumeAll(t, addr, topic, len(values))
	for i, r := range recs {
		if i >= len(values) || string(r.Value) != values[i] {
			t.Fatalf("%s: record %d is %q, want %q", topic, i, r.Value, values)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := newAdmin(t, addr).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup(topic, 0); o.Offset != int64(len(values)) {
		t.Fatalf("%s: high watermark %d, want %d", topic, o.Offset, len(values))
	}
}
