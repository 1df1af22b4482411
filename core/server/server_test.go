package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

func startServer(t *testing.T, dataDir string) (*Server, func()) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = "127.0.0.1:0"
	srv, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	return srv, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}
}

func TestRestartKeepsTopicsAndRecords(t *testing.T) {
	dir := t.TempDir()
	srv, stop := startServer(t, dir)
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()), kgo.DefaultProduceTopic("kept"))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.ms": strPtr("-1")}, "kept"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte{byte(i)}, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	details, err := adm.ListTopics(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	id := details["kept"].ID
	cl.Close()
	clusterID := srv.ClusterID()
	stop()

	srv2, stop2 := startServer(t, dir)
	defer stop2()
	if srv2.ClusterID() != clusterID {
		t.Fatalf("cluster id changed: %s -> %s", clusterID, srv2.ClusterID())
	}
	cl2, err := kgo.NewClient(kgo.SeedBrokers(srv2.KafkaAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	adm2 := kadm.NewClient(cl2)
	details, err = adm2.ListTopics(ctx, "kept")
	if err != nil || details["kept"].ID != id {
		t.Fatalf("topic after restart: %+v %v", details["kept"], err)
	}
	ends, err := adm2.ListEndOffsets(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != 10 {
		t.Fatalf("%d records after restart, want 10", total)
	}
	cfgs, err := adm2.DescribeTopicConfigs(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := cfgs.On("kept", nil); err != nil || !hasConfig(v.Configs, "retention.ms", "-1") {
		t.Fatalf("retention.ms override lost: %v", err)
	}
}

func hasConfig(cs []kadm.Config, name, value string) bool {
	for _, c := range cs {
		if c.Key == name && c.Value != nil && *c.Value == value {
			return true
		}
	}
	return false
}

func strPtr(s string) *string { return &s }

func TestHTTPEndpoints(t *testing.T) {
	srv, stop := startServer(t, t.TempDir())
	defer stop()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()), kgo.DefaultProduceTopic("m"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		resp, err := http.Get("http://" + srv.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if h := get("/healthz"); !strings.Contains(h, `"ok"`) {
		t.Fatalf("healthz: %s", h)
	}
	m := get("/metrics")
	for _, want := range []string{
		`gregor_partition_log_end_offset{partition="0",topic="m"} 1`,
		`gregor_requests_total{api="Produce"}`,
		`gregor_request_duration_seconds_bucket{api="Metadata"`,
		`gregor_network_bytes_in_total`,
		`gregor_network_bytes_out_total`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestDataDirOfAnotherNodeIsRefused(t *testing.T) {
	dir := t.TempDir()
	_, stop := startServer(t, dir)
	stop()
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.NodeID = 2
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = ""
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "belongs to node 1") {
		t.Fatalf("err = %v", err)
	}
}
