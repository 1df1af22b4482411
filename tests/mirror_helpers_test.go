package tests

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
	"github.com/gregorbroker/gregor/mirror"
)

// mirrorConfig writes a mirror.toml for source and target and returns its
// path and the parsed configuration. extra is appended to the [mirror]
// section lines; short intervals keep tests fast.
func mirrorConfig(t *testing.T, source, target, mode, topicsSection string) (string, mirror.Config) {
	t.Helper()
	if topicsSection == "" {
		topicsSection = "include = [\"orders.*\"]\nrename = \"prefix\"\n"
	}
	text := fmt.Sprintf(`[source]
name = "east"
bootstrap = [%q]

[target]
name = "west"
bootstrap = [%q]

[topics]
%s
[groups]
include = [".*"]
sync_offsets = true

[mirror]
mode = %q
refresh_interval_ms = 500
checkpoint_interval_ms = 300
heartbeat_interval_ms = 200
`, source, target, topicsSection, mode)
	path := filepath.Join(t.TempDir(), "mirror.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := mirror.Load(path)
	if err != nil {
		t.Fatalf("mirror.Load: %v\n%s", err, text)
	}
	return path, cfg
}

// inProcessMirror runs a mirror in this process until stopped.
type inProcessMirror struct {
	*mirror.Mirror
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

func startMirror(t *testing.T, cfg mirror.Config, modify ...func(*mirror.RunOptions)) *inProcessMirror {
	t.Helper()
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := mirror.RunOptions{Logger: logger, RetryBackoff: 200 * time.Millisecond}
	for _, f := range modify {
		f(&opts)
	}
	m, err := mirror.New(cfg, opts)
	if err != nil {
		t.Fatalf("mirror.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	im := &inProcessMirror{Mirror: m, cancel: cancel, done: make(chan error, 1)}
	go func() { im.done <- m.Run(ctx) }()
	t.Cleanup(im.stop)
	return im
}

func (m *inProcessMirror) stop() {
	m.once.Do(func() {
		m.cancel()
		select {
		case <-m.done:
		case <-time.After(30 * time.Second):
			panic("mirror did not stop within 30s")
		}
	})
}

// childMirror is a "gregor mirror" child process.
type childMirror struct {
	cmd  *exec.Cmd
	done chan struct{}
	logs *lockedBuffer
}

func startChildMirror(t *testing.T, cfgPath string) *childMirror {
	t.Helper()
	logs := &lockedBuffer{}
	cmd := exec.Command(gregorBinary(t), "mirror", "--config", cfgPath, "--log-level", mirrorChildLogLevel())
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start gregor mirror: %v", err)
	}
	c := &childMirror{cmd: cmd, done: make(chan struct{}), logs: logs}
	go func() {
		_ = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.kill()
		if t.Failed() {
			t.Logf("gregor mirror output:\n%s", logs.String())
		}
	})
	return c
}

// kill sends SIGKILL: nothing is flushed or confirmed.
func (c *childMirror) kill() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// mirrorRecord is one record as both sides are compared.
type mirrorRecord struct {
	Offset    int64
	Key       string
	Value     string
	Headers   string
	Timestamp int64
}

// readPartitions reads every partition of topic up to ends.
func readPartitions(t *testing.T, addr, topic string, ends map[int32]int64) map[int32][]mirrorRecord {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	want := 0
	for p, e := range ends {
		offsets[p] = kgo.NewOffset().AtStart()
		want += int(e)
	}
	out := map[int32][]mirrorRecord{}
	if want == 0 {
		return out
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	reached := 0
	for reached < len(ends) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: timed out with %d of %d partitions complete", topic, reached, len(ends))
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("reading %s[%d]: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			var hs []string
			for _, h := range r.Headers {
				hs = append(hs, h.Key+"="+string(h.Value))
			}
			out[r.Partition] = append(out[r.Partition], mirrorRecord{Offset: r.Offset, Key: string(r.Key),
				Value: string(r.Value), Headers: strings.Join(hs, ","), Timestamp: r.Timestamp.UnixMilli()})
			if r.Offset+1 == ends[r.Partition] {
				reached++
			}
		})
	}
	return out
}

// produceMirrorRecords writes n keyed records with headers and distinct
// timestamps to topic, spread by key.
func produceMirrorRecords(t *testing.T, addr, topic string, from, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := time.Now().Add(-time.Hour).UnixMilli()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := from; i < from+n; i++ {
		r := &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%05d", i%977)), Value: []byte(fmt.Sprintf("v%06d", i)),
			Headers:   []kgo.RecordHeader{{Key: "seq", Value: []byte(fmt.Sprint(i))}},
			Timestamp: time.UnixMilli(base + int64(i))}
		wg.Add(1)
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce to %s: %v", topic, firstErr)
	}
}

// waitMirrored waits until every partition of target holds want[p] records
// (copy) or ends at want[p] (link: the same offsets).
func waitMirrored(t testing.TB, addr, target string, want map[int32]int64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := tryEndOffsets(addr, target)
		ok := len(got) == len(want)
		for p, w := range want {
			if got[p] != w {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("target %s: end offsets %v, want %v", target, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tryEndOffsets lists end offsets, returning nil on any error (the topic
// may not exist yet).
func tryEndOffsets(addr, topic string) map[int32]int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := map[int32]int64{}
	listed, err := newAdminFor(cl).ListEndOffsets(ctx, topic)
	if err != nil || listed.Error() != nil {
		return nil
	}
	for _, ps := range listed {
		for p, o := range ps {
			out[p] = o.Offset
		}
	}
	return out
}

// fixedPortBroker is an in-process broker on a fixed port that can be
// stopped and started again on the same address and data.
type fixedPortBroker struct {
	t       *testing.T
	Addr    string
	dataDir string
	cancel  context.CancelFunc
	done    chan error
}

func startFixedPortBroker(t *testing.T) *fixedPortBroker {
	b := &fixedPortBroker{t: t, Addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), dataDir: t.TempDir()}
	b.Start()
	t.Cleanup(b.Stop)
	return b
}

func (b *fixedPortBroker) Start() {
	b.t.Helper()
	cfg := config.Default()
	cfg.DataDir = b.dataDir
	cfg.Listeners.Kafka = b.Addr
	cfg.Listeners.HTTP = ""
	fastLog(&cfg)
	srv, err := newServer(b.t, cfg)
	if err != nil {
		b.t.Fatalf("server.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel, b.done = cancel, make(chan error, 1)
	go func() { b.done <- srv.Run(ctx) }()
	waitForBroker(b.t, b.Addr, b.done)
}

func (b *fixedPortBroker) Stop() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	b.cancel = nil
	select {
	case err := <-b.done:
		if err != nil {
			b.t.Errorf("broker Run returned %v", err)
		}
	case <-time.After(30 * time.Second):
		b.t.Errorf("broker did not stop within 30s")
	}
}

func newAdminFor(cl *kgo.Client) *kadm.Client { return kadm.NewClient(cl) }

// newServer builds a broker whose warnings go to the test log.
func newServer(t *testing.T, cfg config.Config) (*server.Server, error) {
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return server.New(cfg, server.Options{Logger: logger})
}

// mirrorChildLogLevel is the log level of "gregor mirror" children:
// GREGOR_MIRROR_LOG_LEVEL, or warn.
func mirrorChildLogLevel() string {
	if l := os.Getenv("GREGOR_MIRROR_LOG_LEVEL"); l != "" {
		return l
	}
	return "warn"
}
