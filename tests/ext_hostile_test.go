package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// keyNotByLength returns a key whose murmur2 partition differs from its
// length's, so an answer tells the module's placement from the fallback.
func keyNotByLength(t *testing.T, prefix string, n int32) string {
	t.Helper()
	for i := range 1000 {
		k := fmt.Sprintf("%s-%d", prefix, i)
		if partitioner.KeyPartition([]byte(k), n) != int32(len(k))%n {
			return k
		}
	}
	t.Fatalf("no key for %s", prefix)
	return ""
}

// A hostile WebAssembly partitioner configured for running topics: each
// misbehaviour gets a clear error, the topic's fallback rule applies
// (murmur2 for fallback = "builtin", a failed produce for "reject"), and
// the broker, the module and every other topic keep serving.
func TestHostileWASMPartitionerLeavesBrokerServing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module")
	}
	wasm := hookstest.BuildGo(t, "testdata/wasm-hostile")
	// The time limit stops the looping module; it is long enough that the
	// memory blow-up reaches its page limit first on a loaded machine.
	b := startExtBroker(t, fmt.Sprintf(`[extensions.lenient]
kind = "partitioner"
wasm = %[1]q
timeout_ms = 2000
memory_limit_pages = 512

[extensions.strict]
kind = "partitioner"
wasm = %[1]q
fallback = "reject"
timeout_ms = 2000
memory_limit_pages = 512
`, wasm))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const parts = int32(7)
	adm := newAdmin(t, b.Kafka)
	for _, tc := range []struct{ topic, ext string }{{"lenient", "lenient"}, {"strict", "strict"}, {"plain", ""}} {
		configs := map[string]*string{}
		if tc.ext != "" {
			ext, on := tc.ext, "true"
			configs = map[string]*string{"gregor.partitioner": &ext, "gregor.partitioner.enforce": &on}
		}
		if _, err := adm.CreateTopic(ctx, parts, 1, configs, tc.topic); err != nil {
			t.Fatal(err)
		}
	}
	// A franz-go producer with Kafka's default placement (murmur2 for
	// keys), as an ordinary client writes.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.RecordRetries(0), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	modes := []struct {
		mode, err string
	}{
		{"trap", "guest trapped"},
		{"exit", "guest exited"},
		{"loop", "call timed out"},
		{"oom", "guest memory limit reached"},
		{"panic", "guest returned code 3 (failed)"},
	}
	for _, m := range modes {
		t.Run(m.mode, func(t *testing.T) {
			key := keyNotByLength(t, m.mode, parts)
			rec := restRecord{Key: key, Value: "v", Headers: map[string]string{"mode": m.mode}}
			// Fallback builtin: placed by murmur2, as if no module were set.
			status, ans := postRecords(t, b.HTTP, "lenient", []restRecord{rec})
			if want := partitioner.KeyPartition([]byte(key), parts); status != 200 || ans.Offsets[0].Partition == nil || *ans.Offsets[0].Partition != want {
				t.Fatalf("lenient HTTP: %d %+v, want partition %d", status, ans, want)
			}
			// Fallback reject: a clear error naming the failure.
			status, ans = postRecords(t, b.HTTP, "strict", []restRecord{rec})
			if status != 500 || ans.ErrorCode != 50002 || !strings.Contains(ans.Message, m.err) {
				t.Fatalf("strict HTTP: %d %+v, want 500/50002 with %q", status, ans, m.err)
			}
			// Kafka producers: the placement check falls back to murmur2
			// and accepts; with reject it answers UNKNOWN_SERVER_ERROR.
			kr := func(topic string) *kgo.Record {
				return &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte("v"),
					Headers: []kgo.RecordHeader{{Key: "mode", Value: []byte(m.mode)}}}
			}
			if err := cl.ProduceSync(ctx, kr("lenient")).FirstErr(); err != nil {
				t.Fatalf("lenient Kafka produce: %v", err)
			}
			if err := cl.ProduceSync(ctx, kr("strict")).FirstErr(); !errors.Is(err, kerr.UnknownServerError) {
				t.Fatalf("strict Kafka produce: %v, want UNKNOWN_SERVER_ERROR", err)
			}
			// The module serves the next record itself (a fresh instance
			// replaced the failed one), and other topics are untouched.
			ok := keyNotByLength(t, "ok-"+m.mode, parts)
			for _, topic := range []string{"lenient", "strict"} {
				status, ans := postRecords(t, b.HTTP, topic, []restRecord{{Key: ok, Value: "v"}})
				if want := int32(len(ok)) % parts; status != 200 || ans.Offsets[0].Partition == nil || *ans.Offsets[0].Partition != want {
					t.Fatalf("%s after %s: %d %+v, want the module's partition %d", topic, m.mode, status, ans, want)
				}
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "plain", Key: []byte(key), Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatalf("plain topic: %v", err)
			}
		})
	}
}

// A plugin partitioner process killed while a produce waits for it: the
// produce is answered with the built-in placement without waiting for the
// call timeout, the broker keeps serving, and the plugin is restarted.
func TestPluginKilledMidCallLeavesBrokerServing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin binary")
	}
	bin := filepath.Join(t.TempDir(), "testplugin")
	build := exec.Command(hookstest.GoTool(), "build", "-o", bin, "./plugins/testdata/testplugin")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build testplugin: %v\n%s", err, out)
	}
	// The call timeout is far longer than the test waits: only noticing
	// the dead process can answer the produce in time.
	b := startExtBroker(t, fmt.Sprintf("[extensions.bylength]\nkind = \"partitioner\"\nexec = %q\ntimeout_ms = 60000\n", bin))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const parts = int32(7)
	p := "bylength"
	if _, err := newAdmin(t, b.Kafka).CreateTopic(ctx, parts, 1, map[string]*string{"gregor.partitioner": &p}, "orders"); err != nil {
		t.Fatal(err)
	}
	// The plugin places by key length: "ab" in 2, where murmur2 says 0.
	if status, ans := postRecords(t, b.HTTP, "orders", []restRecord{{Key: "ab", Value: "v"}}); status != 200 || *ans.Offsets[0].Partition != 2 {
		t.Fatalf("before the kill: %d %+v", status, ans)
	}
	pids := childProcesses(t, "testplugin")
	if len(pids) != 1 {
		t.Fatalf("plugin processes: %v", pids)
	}

	// "hang" makes the plugin never answer.
	type answer struct {
		status int
		ans    restAnswer
	}
	done := make(chan answer, 1)
	go func() {
		status, ans := postRecords(t, b.HTTP, "orders", []restRecord{{Key: "hang", Value: "v"}})
		done <- answer{status, ans}
	}()
	select {
	case a := <-done:
		t.Fatalf("a hanging plugin answered: %+v", a)
	case <-time.After(300 * time.Millisecond): // the call is (very likely) in the plugin now
	}
	killedAt := time.Now()
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		want := partitioner.KeyPartition([]byte("hang"), parts)
		if a.status != 200 || a.ans.Offsets[0].Partition == nil || *a.ans.Offsets[0].Partition != want {
			t.Fatalf("produce during the kill: %d %+v, want the built-in's partition %d", a.status, a.ans, want)
		}
		t.Logf("answered %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatal("the produce waiting on the killed plugin was not answered within 20s")
	}

	// Kafka clients are served meanwhile.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Key: []byte("k"), Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The plugin comes back after its restart backoff and places again.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		status, ans := postRecords(t, b.HTTP, "orders", []restRecord{{Key: "ab", Value: "v"}})
		if status != 200 || ans.Offsets[0].Partition == nil {
			t.Fatalf("after the kill: %d %+v", status, ans)
		}
		if *ans.Offsets[0].Partition == 2 {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the plugin did not come back: still the built-in's partition %d", *ans.Offsets[0].Partition)
		}
	}
	if now := childProcesses(t, "testplugin"); len(now) != 1 || now[0] == pids[0] {
		t.Fatalf("plugin processes after the restart: %v (killed %d)", now, pids[0])
	}
}

// childProcesses lists this process's children whose command is comm.
func childProcesses(t *testing.T, comm string) []int {
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
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || s[open+1:end] != comm {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}
