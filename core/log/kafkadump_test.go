package log

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/core/record"
)

// kafkaLibs finds Apache Kafka's jars fetched by scripts/kafka-ref.sh fetch;
// the test that needs them skips when they are absent.
func kafkaLibs(t *testing.T) string {
	cache := os.Getenv("GREGOR_CACHE")
	if cache == "" {
		cache = filepath.Join("..", "..", ".cache")
	}
	version := os.Getenv("KAFKA_VERSION")
	if version == "" {
		version = "4.4.0"
	}
	libs := filepath.Join(cache, "kafka", version, "libs")
	if _, err := os.Stat(filepath.Join(libs, ".complete")); err != nil {
		t.Skipf("Apache Kafka %s jars not fetched (scripts/kafka-ref.sh fetch)", version)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	abs, err := filepath.Abs(libs)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// dumpLogClass is DumpLogSegments' class in the fetched jars: Kafka 4.4
// has it in kafka-tools as org.apache.kafka.tools, 4.1 in kafka.tools.
func dumpLogClass(t *testing.T, libs string) string {
	jars, err := filepath.Glob(filepath.Join(libs, "kafka*.jar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{"org.apache.kafka.tools.DumpLogSegments", "kafka.tools.DumpLogSegments"} {
		entry := []byte(strings.ReplaceAll(class, ".", "/") + ".class")
		for _, jar := range jars {
			b, err := os.ReadFile(jar)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, entry) {
				return class
			}
		}
	}
	t.Fatalf("no DumpLogSegments class in %s", libs)
	return ""
}

// TestKafkaDumpLogReadsOurFiles runs Kafka's own DumpLogSegments over the
// segments and indexes we write and fails on any complaint it makes.
func TestKafkaDumpLogReadsOurFiles(t *testing.T) {
	libs := kafkaLibs(t)
	cfg := DefaultConfig()
	cfg.SegmentBytes = 8 << 10
	cfg.IndexIntervalBytes = 512
	e := newEnv(t, cfg)
	l := e.log("dump", 0)
	codecs := []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd}
	for i := 0; i < 120; i++ {
		b := makeBatch(t, batchSpec{records: 1 + i%7, ts: 1_700_000_000_000 + int64(i*37%50)*1000, tsStep: 3, epoch: int32(i / 40), codec: codecs[i%len(codecs)], value: 40 + i})
		mustAppend(t, l, b)
	}
	if err := e.dir.Close(); err != nil {
		t.Fatal(err)
	}
	e.dir = nil
	var files []string
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
		files = append(files, segmentFiles(t, l.Path(), suffix)...)
	}
	if len(files) < 9 {
		t.Fatalf("only %d files; want several segments", len(files))
	}
	cmd := exec.Command("java", "-Xmx256m", "-cp", filepath.Join(libs, "*"), dumpLogClass(t, libs),
		"--deep-iteration", "--files", strings.Join(files, ","))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("DumpLogSegments: %v\n%s", err, out)
	}
	text := string(out)
	bad := regexp.MustCompile(`(?i)mismatch|out of order|exception|error|isvalid: false|corrupt|not found`)
	if m := bad.FindString(text); m != "" {
		t.Fatalf("DumpLogSegments complained (%q):\n%s", m, text)
	}
	if n := strings.Count(text, "baseOffset:"); n != 120 {
		t.Fatalf("DumpLogSegments listed %d batches, want 120:\n%s", n, text)
	}
	if os.Getenv("GREGOR_DUMP_OUTPUT") != "" {
		t.Logf("output:\n%s", text)
	}
}
