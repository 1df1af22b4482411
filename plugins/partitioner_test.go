package plugins

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/sdk/partitioner"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
)

func openTestPartitioner(t *testing.T) (*Partitioner, *fakeClock, *logSink) {
	t.Helper()
	cfg, clock, sink := testConfig(t, sdkplugin.KindPartitioner, `{}`)
	p, err := OpenPartitioner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, clock, sink
}

func keyed(keys ...string) []partitioner.Record {
	rs := make([]partitioner.Record, len(keys))
	for i, k := range keys {
		rs[i] = partitioner.Record{Key: []byte(k), Value: []byte("v")}
	}
	return rs
}

func TestPartitionerPlacesBatch(t *testing.T) {
	p, _, _ := openTestPartitioner(t)
	tests := []struct {
		name    string
		records []partitioner.Record
		n       int32
		want    []int32
	}{
		{"lengths", keyed("a", "bb", "ccc", "dddd"), 3, []int32{1, 2, 0, 1}},
		{"one partition", keyed("a", "bb"), 1, []int32{0, 0}},
		{"empty and null keys", []partitioner.Record{{Key: []byte{}}, {Key: nil}}, 5, []int32{0, 0}},
		{"headers cross", []partitioner.Record{{Key: []byte("xy"), Headers: []partitioner.Header{{Key: "h", Value: []byte("1")}}}}, 7, []int32{2}},
		{"empty batch", nil, 4, []int32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := make([]int32, len(tt.records))
			if err := p.PartitionBatch(tt.records, tt.n, out); err != nil {
				t.Fatal(err)
			}
			for i := range tt.want {
				if out[i] != tt.want[i] {
					t.Fatalf("out = %v, want %v", out, tt.want)
				}
			}
		})
	}
}

func TestPartitionerBadArguments(t *testing.T) {
	p, _, _ := openTestPartitioner(t)
	if err := p.PartitionBatch(keyed("a"), 0, make([]int32, 1)); !errors.Is(err, partitioner.ErrNoPartitions) {
		t.Fatalf("0 partitions: %v", err)
	}
	if err := p.PartitionBatch(keyed("a", "b"), 3, make([]int32, 1)); err == nil {
		t.Fatal("short output accepted")
	}
}

func TestPartitionerForwardsStderr(t *testing.T) {
	_, _, sink := openTestPartitioner(t)
	ctx := waitCtx(t)
	for _, want := range []string{"msg=configured", "plain stderr line from test-partitioner"} {
		select {
		case <-sink.waitFor(want):
		case <-ctx.Done():
			t.Fatalf("log lacks %q:\n%s", want, sink)
		}
	}
	if !strings.Contains(sink.String(), "level=INFO msg=configured") {
		t.Fatalf("the plugin's info record lost its level:\n%s", sink)
	}
}

func TestPartitionerExtensionErrors(t *testing.T) {
	tests := []struct {
		key    string
		target error
		text   string
	}{
		{"range", partitioner.ErrPartitionOutOfRange, "partition 4 of 4"},
		{"error", ErrExtension, "asked to fail"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			p, _, _ := openTestPartitioner(t)
			out := make([]int32, 2)
			err := p.PartitionBatch(keyed("ok", tt.key), 4, out)
			if !errors.Is(err, ErrExtension) || !errors.Is(err, tt.target) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v, want %v with %q", err, tt.target, tt.text)
			}
			// An error of the extension's own is no reason to restart it.
			if err := p.PartitionBatch(keyed("abc"), 4, out); err != nil || out[0] != 3 {
				t.Fatalf("after the error: out %v, err %v", out, err)
			}
		})
	}
}

func TestPartitionerCrashRestartsWithBackoff(t *testing.T) {
	p, clock, sink := openTestPartitioner(t)
	out := make([]int32, 1)
	err := p.PartitionBatch(keyed("crash"), 4, out)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("crash: %v", err)
	}
	// Within the backoff, calls fail at once without a restart.
	err = p.PartitionBatch(keyed("a"), 4, out)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "next restart in 1s") {
		t.Fatalf("during backoff: %v", err)
	}
	if err := p.WaitReady(waitCtx(t)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("WaitReady during backoff: %v", err)
	}
	clock.Advance(time.Second)
	if err := p.WaitReady(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := p.PartitionBatch(keyed("abc"), 4, out); err != nil || out[0] != 3 {
		t.Fatalf("after restart: out %v, err %v", out, err)
	}
	if !strings.Contains(sink.String(), "extension process restarted") {
		t.Fatalf("no restart in the log:\n%s", sink)
	}
	// A second crash right after a successful call waits the minimum again;
	// crashes without a success in between double the wait.
	if err := p.PartitionBatch(keyed("crash"), 4, out); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("second crash: %v", err)
	}
	clock.Advance(time.Second)
	if err := p.WaitReady(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := p.PartitionBatch(keyed("crash"), 4, out); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("third crash: %v", err)
	}
	if err := p.PartitionBatch(keyed("a"), 4, out); !strings.Contains(err.Error(), "next restart in 2s") {
		t.Fatalf("backoff did not double: %v", err)
	}
}

func TestPartitionerHangTimesOut(t *testing.T) {
	cfg, clock, _ := testConfig(t, sdkplugin.KindPartitioner, `{}`)
	cfg.CallTimeout = 200 * time.Millisecond
	p, err := OpenPartitioner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out := make([]int32, 1)
	start := time.Now()
	err = p.PartitionBatch(keyed("hang"), 4, out)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("hang: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the timed-out call took %v", d)
	}
	clock.Advance(time.Second)
	if err := p.WaitReady(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := p.PartitionBatch(keyed("ab"), 4, out); err != nil || out[0] != 2 {
		t.Fatalf("after restart: out %v, err %v", out, err)
	}
}

func TestPartitionerKilledMidUse(t *testing.T) {
	p, clock, _ := openTestPartitioner(t)
	records := keyed("21", "foobar", "abc")

	// Callers keep going while the process is killed: every call is
	// answered by the plugin before the kill or fails with ErrUnavailable
	// after it (the fallback is the broker's), and none hangs.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	killed := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]int32, len(records))
			for i := 0; i < 200; i++ {
				if i == 100 && w == 0 {
					p.proc.mu.Lock()
					pid := p.proc.client.ReattachConfig().Pid
					p.proc.mu.Unlock()
					if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
						errs <- err
						return
					}
					close(killed)
				}
				if err := p.PartitionBatch(records, 16, out); err != nil && !errors.Is(err, ErrUnavailable) {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	<-killed
	out := make([]int32, len(records))
	if err := p.PartitionBatch(records, 16, out); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v with the process down, want ErrUnavailable", err)
	}
	clock.Advance(time.Second)
	if err := p.WaitReady(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := p.PartitionBatch(keyed("abcde"), 16, out); err != nil || out[0] != 5 {
		t.Fatalf("after restart the plugin should answer: out %v, err %v", out, err)
	}
}

func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	exits := filepath.Join(dir, "exits")
	sleeps := filepath.Join(dir, "sleeps")
	must(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	must(t, os.WriteFile(exits, []byte("#!/bin/sh\necho 'cannot open database' >&2\nexit 3\n"), 0o755))
	must(t, os.WriteFile(sleeps, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755))
	tests := []struct {
		name   string
		path   string
		config string
		text   string
	}{
		{"missing binary", filepath.Join(dir, "nope"), `{}`, "no such file"},
		{"not executable", notExec, `{}`, "permission denied"},
		{"exits at start", exits, `{}`, "wrote no handshake"},
		{"no handshake", sleeps, `{}`, "no handshake within the start timeout"},
		{"protocol mismatch", oldPlugin, `{}`, "another protocol version than this broker (1)"},
		{"configuration refused", testPlugin, `{"refuse": true}`, "refusing this configuration"},
		{"unknown config key", testPlugin, `{"colour": "red"}`, `unknown field "colour"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, _ := testConfig(t, sdkplugin.KindPartitioner, tt.config)
			cfg.Path = tt.path
			cfg.StartTimeout = 2 * time.Second
			p, err := OpenPartitioner(cfg)
			if err == nil {
				p.Close()
				t.Fatal("started")
			}
			if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v, want ErrStart with %q", err, tt.text)
			}
			if !strings.HasPrefix(err.Error(), "plugins: test-partitioner: start ") {
				t.Fatalf("err does not name the extension: %v", err)
			}
		})
	}
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		text string
	}{
		{"no name", func(c *Config) { c.Name = "" }, "without a name"},
		{"wrong kind", func(c *Config) { c.Kind = "retention" }, `kind "retention", want "partitioner"`},
		{"no path", func(c *Config) { c.Path = "" }, "no executable path"},
		{"negative timeout", func(c *Config) { c.CallTimeout = -1 }, "call timeout"},
		{"backoff", func(c *Config) { c.MinBackoff, c.MaxBackoff = time.Minute, time.Second }, "backoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, _ := testConfig(t, sdkplugin.KindPartitioner, `{}`)
			tt.edit(&cfg)
			_, err := OpenPartitioner(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v, want %q", err, tt.text)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	p := &process{cfg: Config{MinBackoff: time.Second, MaxBackoff: 10 * time.Second}}
	for failures, want := range []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		p.failures = failures
		if got := p.backoff(); got != want {
			t.Errorf("%d failures: backoff %v, want %v", failures, got, want)
		}
	}
}

func TestClosed(t *testing.T) {
	p, _, _ := openTestPartitioner(t)
	p.Close()
	if err := p.PartitionBatch(keyed("a"), 2, make([]int32, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
