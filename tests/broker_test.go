package tests

import (
	"bytes"
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
)

// brokerStartTimeout bounds how long a broker may take to answer Metadata.
const brokerStartTimeout = 60 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	for _, b := range []*builtBinary{&plainBin, &errorfsBin} {
		if b.path != "" {
			os.RemoveAll(filepath.Dir(b.path))
		}
	}
	os.Exit(code)
}

// inProcessBroker is a broker started through server.New in this process.
type inProcessBroker struct {
	Addr    string
	DataDir string
	Config  config.Config
	// HTTPAddr is the http listener's address when the config has one.
	HTTPAddr string
}

// startBroker starts an in-process broker on 127.0.0.1:0 with its data in a
// fresh temporary directory, waits until it answers Metadata, and stops it
// (checking that Run returns cleanly) when the test ends. Broker warnings and
// errors go to the test log.
func startBroker(t testing.TB, modify ...func(*config.Config)) *inProcessBroker {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = ""
	for _, m := range modify {
		m(&cfg)
	}
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop) // runs last: after the broker has stopped
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := server.New(cfg, server.Options{Logger: logger})
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
	b := &inProcessBroker{Addr: srv.KafkaAddr(), DataDir: cfg.DataDir, Config: cfg, HTTPAddr: srv.HTTPAddr()}
	waitForBroker(t, b.Addr, done)
	return b
}

// waitForBroker polls Metadata until the broker lists itself, failing early
// if exited delivers (the broker stopped before answering).
func waitForBroker(t testing.TB, addr string, exited <-chan error) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTimeout(2*time.Second))
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(brokerStartTimeout)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		md, err := adm.BrokerMetadata(ctx)
		cancel()
		if err == nil && len(md.Brokers) > 0 {
			return
		}
		if err == nil {
			err = fmt.Errorf("metadata lists no brokers")
		}
		lastErr = err
		if time.Now().After(deadline) {
			t.Fatalf("broker at %s not answering after %v: %v", addr, brokerStartTimeout, lastErr)
		}
		select {
		case err := <-exited:
			t.Fatalf("broker at %s exited before answering: %v (last metadata error: %v)", addr, err, lastErr)
		case <-tick.C:
		}
	}
}

// testLogWriter sends broker log lines to the test log until stopped.
type testLogWriter struct {
	t       testing.TB
	mu      sync.Mutex
	stopped bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Logf("broker: %s", bytes.TrimRight(p, "\n"))
	}
	return len(p), nil
}

func (w *testLogWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}

// newAdmin returns an admin client for addr, closed at test end.
func newAdmin(t testing.TB, addr string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// createTopic creates a topic and fails the test on any error.
func createTopic(t testing.TB, addr, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, topic)
	if err != nil {
		t.Fatalf("create topic %q: %v (%s)", topic, err, resp.ErrMessage)
	}
}

// endOffsets lists the high watermark of every partition of topic.
func endOffsets(t testing.TB, addr, topic string) map[int32]int64 {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listed, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list end offsets of %q: %v", topic, err)
	}
	if err := listed.Error(); err != nil {
		t.Fatalf("list end offsets of %q: %v", topic, err)
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// The gregor binaries, each built once per test run: the ordinary one by
// gregorBinary, the fault suite's by gregorErrorfsBinary.
var (
	plainBin   builtBinary
	errorfsBin builtBinary
)

// builtBinary is ./cmd/gregor built once with some build tags.
type builtBinary struct {
	once sync.Once
	path string
	err  error
}

// gregorBinary builds ./cmd/gregor once and returns its path.
func gregorBinary(t testing.TB) string {
	t.Helper()
	return plainBin.get(t)
}

// gregorErrorfsBinary builds ./cmd/gregor with the errorfs tag once and
// returns its path: a broker whose logs run on core/log/vfs/errorfs, armed
// from the file GREGOR_ERRORFS_RULES names (cmd/gregor/faultfs_errorfs.go).
// Only the fault suite runs it; no other build links errorfs.
func gregorErrorfsBinary(t testing.TB) string {
	t.Helper()
	return errorfsBin.get(t, "errorfs")
}

func (b *builtBinary) get(t testing.TB, tags ...string) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "gregor-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "gregor")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
			if _, serr := os.Stat(goTool); serr != nil {
				goTool = "/usr/local/go/bin/go"
			}
		}
		args := []string{"build", "-o", b.path}
		if len(tags) > 0 {
			args = append(args, "-tags", strings.Join(tags, ","))
		}
		cmd := exec.Command(goTool, append(args, "./cmd/gregor")...)
		cmd.Dir = ".." // the module root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go %s ./cmd/gregor: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if b.err != nil {
		t.Fatalf("%v", b.err)
	}
	return b.path
}

// childBroker is a "gregor serve" child process.
type childBroker struct {
	t    testing.TB
	Addr string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result; read after done is closed
	logs *lockedBuffer
}

// startChildBroker runs "gregor serve --config cfgPath" and waits until the
// broker at addr answers. The process is stopped at test end; its output is
// logged if the test failed.
func startChildBroker(t testing.TB, cfgPath, addr string) *childBroker {
	t.Helper()
	logs := &lockedBuffer{}
	cmd := exec.Command(gregorBinary(t), "serve", "--config", cfgPath, "--log-level", "warn")
	cmd.Stdout = logs
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start gregor serve: %v", err)
	}
	c := &childBroker{t: t, Addr: addr, cmd: cmd, done: make(chan struct{}), logs: logs}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			t.Logf("gregor serve output (pid %d):\n%s", cmd.Process.Pid, logs.String())
		}
	})
	exited := make(chan error, 1)
	go func() {
		<-c.done
		exited <- c.err
	}()
	waitForBroker(t, addr, exited)
	return c
}

// kill sends SIGKILL and waits for the process to be gone. It may be
// called from any goroutine.
func (c *childBroker) kill() error {
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("SIGKILL gregor serve: %w", err)
	}
	<-c.done
	return nil
}

// stop asks the process to shut down (SIGTERM) and kills it after 30s.
func (c *childBroker) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		if c.err != nil {
			c.t.Errorf("gregor serve exited with %v after SIGTERM", c.err)
		}
	case <-time.After(30 * time.Second):
		// SIGQUIT makes the Go runtime print every goroutine's stack to
		// the output logged with the failure: where shutdown hangs.
		c.t.Errorf("gregor serve did not stop within 30s of SIGTERM; SIGQUIT for its goroutines, then killing it")
		_ = c.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for a child's stdout and stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// writeBrokerConfig writes a broker.toml for a child broker.
func writeBrokerConfig(t testing.TB, dir, dataDir, kafkaAddr string) string {
	t.Helper()
	text := fmt.Sprintf("data_dir = %q\n\n[listeners]\nkafka = %q\nhttp = \"\"\n", dataDir, kafkaAddr)
	path := filepath.Join(dir, "broker.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return path
}
