package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// byLength places a record by the length of its key: an extension's
// partitioner, injected as the server's caller would.
type byLength struct{}

func (byLength) PartitionBatch(records []partitioner.Record, n int32, out []int32) error {
	if err := partitioner.CheckBatch(records, n, out); err != nil {
		return err
	}
	for i, r := range records {
		out[i] = int32(len(r.Key)) % n
	}
	return nil
}

func startWithPartitioner(t *testing.T) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = "127.0.0.1:0"
	cfg.Extensions = map[string]config.Extension{"bylength": {Kind: config.KindPartitioner, Exec: "unused"}}
	srv, err := New(cfg, Options{
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Partitioners: map[string]partitioner.BatchPartitioner{"bylength": byLength{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return srv
}

type restOffset struct {
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
	ErrorCode *int    `json:"error_code"`
	Error     *string `json:"error"`
}

type restResponse struct {
	Offsets   []restOffset `json:"offsets"`
	ErrorCode int          `json:"error_code"`
	Message   string       `json:"message"`
}

func postRecords(t *testing.T, srv *Server, topic, contentType, body string) (int, restResponse) {
	t.Helper()
	resp, err := http.Post("http://"+srv.HTTPAddr()+"/topics/"+topic, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out restResponse
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.kafka.v2+json" {
		t.Fatalf("content type %q", ct)
	}
	return resp.StatusCode, out
}

func TestPlacementCheckAndHTTPProduce(t *testing.T) {
	srv := startWithPartitioner(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordRetries(0), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	enforce := map[string]*string{"gregor.partitioner": strPtr("bylength"), "gregor.partitioner.enforce": strPtr("true")}
	if _, err := adm.CreateTopic(ctx, 4, 1, enforce, "placed"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 4, 1, map[string]*string{"gregor.partitioner": strPtr("bylength")}, "free"); err != nil {
		t.Fatal(err)
	}

	// Kafka producers: the partitioner's choice is accepted, another is
	// INVALID_RECORD; null keys go anywhere; an unchecked topic takes all.
	produce := []struct {
		topic     string
		key       []byte
		partition int32
		want      error
	}{
		{"placed", []byte("abc"), 3, nil},
		{"placed", []byte("abc"), 1, kerr.InvalidRecord},
		{"placed", nil, 2, nil},
		{"free", []byte("abc"), 1, nil},
	}
	for _, p := range produce {
		err := cl.ProduceSync(ctx, &kgo.Record{Topic: p.topic, Key: p.key, Value: []byte("v"), Partition: p.partition}).FirstErr()
		if !errors.Is(err, p.want) && !(p.want == nil && err == nil) {
			t.Fatalf("%s key %q to %d: err %v, want %v", p.topic, p.key, p.partition, err, p.want)
		}
	}

	// HTTP, binary format: placed by the topic's partitioner.
	code, resp := postRecords(t, srv, "placed", "application/vnd.kafka.binary.v2+json",
		`{"records":[{"key":"YWJj","value":"dmFsdWU="},{"key":"YQ==","value":"eA=="},{"value":"bnVsbCBrZXk="}]}`)
	if code != 200 || len(resp.Offsets) != 3 {
		t.Fatalf("binary: %d %+v", code, resp)
	}
	if *resp.Offsets[0].Partition != 3 || *resp.Offsets[1].Partition != 1 || resp.Offsets[2].Partition == nil {
		t.Fatalf("binary placement: %+v", resp.Offsets)
	}
	// JSON format: the key is its JSON text, `"ab"` (4 bytes).
	code, resp = postRecords(t, srv, "placed", "application/vnd.kafka.json.v2+json",
		`{"records":[{"key":"ab","value":{"n":1}},{"key":"ab","value":[1,2]}]}`)
	if code != 200 || *resp.Offsets[0].Partition != 0 || *resp.Offsets[1].Partition != 0 || *resp.Offsets[1].Offset != *resp.Offsets[0].Offset+1 {
		t.Fatalf("json: %d %+v", code, resp)
	}
	// An explicit partition the partitioner disagrees with is refused
	// with the expected partition named.
	code, resp = postRecords(t, srv, "placed", "application/vnd.kafka.binary.v2+json",
		`{"records":[{"key":"YWJj","value":"dg==","partition":2}]}`)
	if code != 200 || resp.Offsets[0].ErrorCode == nil || *resp.Offsets[0].ErrorCode != 1 ||
		!strings.Contains(*resp.Offsets[0].Error, "belongs in partition 3 by partitioner bylength, not partition 2") {
		t.Fatalf("misplaced: %d %+v", code, resp)
	}

	// The records are where the answers said, as written.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"placed": {0: kgo.NewOffset().AtStart(), 3: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	got := map[string]int32{}
	for len(got) < 3 {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed only %v", got)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Key)+"="+string(r.Value)] = r.Partition })
	}
	want := map[string]int32{"abc=v": 3, "abc=value": 3, `"ab"={"n":1}`: 0}
	for k, p := range want {
		if got[k] != p {
			t.Errorf("record %s in partition %d (have %v)", k, got[k], got)
		}
	}

	// Request errors, as the REST Proxy answers them.
	bad := []struct {
		topic, ct, body string
		status, code    int
	}{
		{"nope", "application/vnd.kafka.binary.v2+json", `{"records":[{"value":"eA=="}]}`, 404, 40401},
		{"placed", "application/json", `{"records":[{"value":"x"}]}`, 415, 41501},
		{"placed", "application/vnd.kafka.binary.v2+json", `{"records":[{"value":"not base64!"}]}`, 422, 42201},
		{"placed", "application/vnd.kafka.binary.v2+json", `{"records":[{"value":"eA==","partition":9}]}`, 404, 40402},
		{"placed", "application/vnd.kafka.json.v2+json", `{"records":[]}`, 422, 42201},
		{"placed", "application/vnd.kafka.json.v2+json", `{"records":[{"value":1}],"value_schema":"{}"}`, 422, 42201},
		{"placed", "application/vnd.kafka.json.v2+json", `{"records":`, 422, 42201},
	}
	for _, b := range bad {
		code, resp := postRecords(t, srv, b.topic, b.ct, b.body)
		if code != b.status || resp.ErrorCode != b.code {
			t.Errorf("%s %s %s: %d %+v, want %d/%d", b.topic, b.ct, b.body, code, resp, b.status, b.code)
		}
	}
}
