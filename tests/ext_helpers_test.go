package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
	"github.com/gregorbroker/gregor/loader"
)

// extBroker is an in-process broker started the way `gregor serve` starts
// one: broker.toml decoded by config.Load, extensions opened by loader.Open.
type extBroker struct {
	Kafka, HTTP string
}

// startExtBroker writes a broker.toml with loopback listeners and the
// given [extensions.NAME] tables, and runs a broker on it until the test
// ends.
func startExtBroker(t testing.TB, extensions string) *extBroker {
	t.Helper()
	dir := t.TempDir()
	toml := fmt.Sprintf("data_dir = %q\n\n[listeners]\nkafka = \"127.0.0.1:0\"\nhttp = \"127.0.0.1:0\"\n\n%s", filepath.Join(dir, "data"), extensions)
	path := filepath.Join(dir, "broker.toml")
	if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("config.Load:\n%s\n%v", toml, err)
	}
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop) // runs last: after the broker and its extensions have stopped
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := server.Options{Logger: logger}
	closeExtensions, err := loader.Open(context.Background(), cfg, &opts, logger)
	if err != nil {
		t.Fatalf("loader.Open: %v", err)
	}
	t.Cleanup(closeExtensions)
	srv, err := server.New(cfg, opts)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("broker Run returned %v at shutdown", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("broker did not stop within 30s of cancellation")
		}
	})
	return &extBroker{Kafka: srv.KafkaAddr(), HTTP: srv.HTTPAddr()}
}

// restRecord is one record of a REST Proxy produce request.
type restRecord struct {
	Key, Value string
	Headers    map[string]string
	Partition  *int32
}

// restOffset is one entry of a REST Proxy produce answer.
type restOffset struct {
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
	ErrorCode *int    `json:"error_code"`
	Error     *string `json:"error"`
}

type restAnswer struct {
	Offsets   []restOffset `json:"offsets"`
	ErrorCode int          `json:"error_code"`
	Message   string       `json:"message"`
}

// postRecords writes records to topic through the broker's HTTP endpoint
// in the binary embedded format and returns the status and the answer.
func postRecords(t testing.TB, httpAddr, topic string, recs []restRecord) (int, restAnswer) {
	t.Helper()
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	type header struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	type rec struct {
		Key       string   `json:"key"`
		Value     string   `json:"value"`
		Headers   []header `json:"headers,omitempty"`
		Partition *int32   `json:"partition,omitempty"`
	}
	body := struct {
		Records []rec `json:"records"`
	}{}
	for _, r := range recs {
		out := rec{Key: b64(r.Key), Value: b64(r.Value), Partition: r.Partition}
		for k, v := range r.Headers {
			out.Headers = append(out.Headers, header{Name: k, Value: b64(v)})
		}
		body.Records = append(body.Records, out)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+httpAddr+"/topics/"+topic, "application/vnd.kafka.binary.v2+json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	var ans restAnswer
	if err := json.Unmarshal(text, &ans); err != nil {
		t.Fatalf("POST /topics/%s: %d %s: %v", topic, resp.StatusCode, text, err)
	}
	return resp.StatusCode, ans
}

// consumeAll reads want records from every partition of topic and returns
// them.
func consumeAll(t testing.TB, addr, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records from %s", len(out), want, topic)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("consume %s: %v", topic, err) })
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}
