package plugins

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binaries built once for the package's tests.
var (
	testPlugin string // testdata/testplugin: serves every kind, misbehaves on request
	oldPlugin  string // testdata/oldplugin: another protocol version
	binDir     string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gregor-plugins-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	testPlugin = filepath.Join(dir, "testplugin")
	oldPlugin = filepath.Join(dir, "oldplugin")
	for bin, pkg := range map[string]string{testPlugin: "./testdata/testplugin", oldPlugin: "./testdata/oldplugin"} {
		if err := goBuild(bin, pkg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goBuild builds the main package pkg (a path relative to the working
// directory) into out with the go command that runs the tests.
func goBuild(out, pkg string) error {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			return fmt.Errorf("no go command to build %s: %w", pkg, err)
		}
	}
	cmd := exec.Command(goBin, "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// fakeClock is the injected clock: it moves only when a test says so.
type fakeClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1700000000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// logSink collects log records and lets a test wait for one.
type logSink struct {
	mu      sync.Mutex // guards buf and waiters
	buf     bytes.Buffer
	waiters []logWaiter
}

type logWaiter struct {
	substr string
	ch     chan struct{}
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	kept := s.waiters[:0]
	for _, w := range s.waiters {
		if strings.Contains(s.buf.String(), w.substr) {
			close(w.ch)
			continue
		}
		kept = append(kept, w)
	}
	s.waiters = kept
	return len(p), nil
}

// waitFor returns a channel closed once the log holds substr.
func (s *logSink) waitFor(substr string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(s.buf.String(), substr) {
		close(ch)
		return ch
	}
	s.waiters = append(s.waiters, logWaiter{substr: substr, ch: ch})
	return ch
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *logSink) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testConfig is a Config for the test plugin with a fake clock and a log sink.
func testConfig(t *testing.T, kind, configJSON string) (Config, *fakeClock, *logSink) {
	t.Helper()
	clock := newFakeClock()
	sink := &logSink{}
	return Config{
		Name:         "test-" + kind,
		Kind:         kind,
		Path:         testPlugin,
		ConfigJSON:   []byte(configJSON),
		CallTimeout:  2 * time.Second,
		StartTimeout: 20 * time.Second,
		MinBackoff:   time.Second,
		MaxBackoff:   8 * time.Second,
		Logger:       sink.logger(),
		Now:          clock.Now,
	}, clock, sink
}

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
