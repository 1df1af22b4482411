package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
	"github.com/gregorbroker/gregor/loader"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

func goBuild(t *testing.T, out, pkg string) {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command: %v", err)
		}
	}
	if b, err := exec.Command(goBin, "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// childPIDs lists the processes whose parent is this one and whose command
// is comm.
func childPIDs(t *testing.T, comm string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		fields := strings.Fields(s[close+1:])
		if len(fields) < 2 || s[open+1:close] != comm {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

func httpProduce(t *testing.T, addr, topic, key string) int32 {
	t.Helper()
	body := fmt.Sprintf(`{"records":[{"key":%q,"value":"dg=="}]}`, key)
	resp, err := http.Post("http://"+addr+"/topics/"+topic, "application/vnd.kafka.binary.v2+json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Offsets []struct {
			Partition *int32  `json:"partition"`
			Error     *string `json:"error"`
		} `json:"offsets"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != 200 || len(out.Offsets) != 1 || out.Offsets[0].Partition == nil {
		t.Fatalf("produce: %d %s %v", resp.StatusCode, b, err)
	}
	return *out.Offsets[0].Partition
}

// A plugin partitioner killed while the broker serves: produce goes on
// with the built-in fallback, and the plugin is back after its restart.
func TestBrokerServesThroughAKilledPlugin(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "testplugin")
	goBuild(t, bin, "../../plugins/testdata/testplugin")
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = "127.0.0.1:0"
	cfg.Extensions = map[string]config.Extension{
		"bylength": {Kind: config.KindPartitioner, Exec: bin, TimeoutMs: 5000},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := server.Options{Logger: logger}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	closeAll, err := loader.Open(ctx, cfg, &opts, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	srv, err := server.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	p := "bylength"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 7, 1, map[string]*string{"gregor.partitioner": &p}, "orders"); err != nil {
		t.Fatal(err)
	}
	key := "YWI=" // base64 of "ab"
	if got := httpProduce(t, srv.HTTPAddr(), "orders", key); got != 2 {
		t.Fatalf("the plugin should place a 2-byte key in partition 2, got %d", got)
	}
	pids := childPIDs(t, "testplugin")
	if len(pids) != 1 {
		t.Fatalf("plugin processes: %v", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	want := partitioner.KeyPartition([]byte("ab"), 7) // 0, where the plugin says 2
	if got := httpProduce(t, srv.HTTPAddr(), "orders", key); got != want {
		t.Fatalf("with the plugin dead the built-in should place the key in %d, got %d", want, got)
	}
	// The broker keeps serving Kafka clients too.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Key: []byte("k"), Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
