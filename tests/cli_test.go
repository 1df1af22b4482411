package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/config"
)

// cliResult is one run of the gregor binary.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the built gregor binary with args, stdin and extra
// environment; GREGOR_BOOTSTRAP is removed from the inherited environment.
func runCLI(t *testing.T, stdin string, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gregorBinary(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GREGOR_BOOTSTRAP=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	err := cmd.Run()
	res := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	default:
		t.Fatalf("gregor %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("gregor %s: still running after 60s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.stdout, res.stderr)
	}
	return res
}

// mustCLI runs gregor and fails the test unless it exits with want.
func mustCLI(t *testing.T, want int, stdin string, args ...string) cliResult {
	t.Helper()
	res := runCLI(t, stdin, nil, args...)
	if res.code != want {
		t.Fatalf("gregor %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), res.code, want, res.stdout, res.stderr)
	}
	return res
}

func wantContains(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("%s does not contain %q:\n%s", what, s, text)
		}
	}
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	sort.Strings(lines)
	return lines
}

// TestCLI drives the gregor binary's client commands against an in-process
// broker: topic create/list/describe/alter/delete, produce from stdin and
// consume --count, with their error paths.
func TestCLI(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.Topics.AutoCreate = false })
	bs := "--bootstrap=" + b.Addr
	const topic = "cli-orders"

	t.Run("create", func(t *testing.T) {
		res := mustCLI(t, 0, "", "topic", "create", topic, bs, "--partitions", "3", "--config", "retention.ms=3600000")
		wantContains(t, "stdout", res.stdout, `created topic "cli-orders"`, "3 partitions")
		res = mustCLI(t, 1, "", "topic", "create", topic, bs)
		wantContains(t, "stderr", res.stderr, `topic "cli-orders" already exists`)
		mustCLI(t, 0, "", "topic", "create", topic, bs, "--if-not-exists")
		res = mustCLI(t, 2, "", "topic", "create", "x", bs, "--partitions", "0")
		wantContains(t, "stderr", res.stderr, "--partitions must be at least 1")
	})

	t.Run("list", func(t *testing.T) {
		res := mustCLI(t, 0, "", "topic", "list", bs)
		found := false
		for _, line := range strings.Split(res.stdout, "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == topic {
				found = true
				if f[1] != "3" || f[2] != "1" {
					t.Errorf("list line %q: want 3 partitions, replication factor 1", line)
				}
			}
		}
		if !found {
			t.Errorf("topic list does not show %s:\n%s", topic, res.stdout)
		}
		// The bootstrap address from the environment.
		env := runCLI(t, "", []string{"GREGOR_BOOTSTRAP=" + b.Addr}, "topic", "list")
		if env.code != 0 || !strings.Contains(env.stdout, topic) {
			t.Errorf("topic list with GREGOR_BOOTSTRAP: exit %d\n%s%s", env.code, env.stdout, env.stderr)
		}
	})

	input := "alice:1\nbob:2\ncarol:3\nalice:4\n"
	t.Run("produce", func(t *testing.T) {
		res := mustCLI(t, 0, input, "produce", topic, bs, "--key-separator", ":", "--header", "src=cli", "--compression", "zstd")
		wantContains(t, "stderr", res.stderr, `produced 4 records`, "partition ")
		// A fixed partition, no key.
		res = mustCLI(t, 0, "fixed\n", "produce", topic, bs, "--partition", "2", "--acks", "1")
		wantContains(t, "stderr", res.stderr, "produced 1 record", "partition 2: offset")
	})

	t.Run("consume", func(t *testing.T) {
		res := mustCLI(t, 0, "", "consume", topic, bs, "--count", "5", "--format", "%k=%v [%h] p%p")
		got := sortedLines(res.stdout)
		pa, pb, pc := murmur2Partition([]byte("alice"), 3), murmur2Partition([]byte("bob"), 3), murmur2Partition([]byte("carol"), 3)
		want := []string{
			"=fixed [] p2",
			fmt.Sprintf("alice=1 [src=cli] p%d", pa),
			fmt.Sprintf("alice=4 [src=cli] p%d", pa),
			fmt.Sprintf("bob=2 [src=cli] p%d", pb),
			fmt.Sprintf("carol=3 [src=cli] p%d", pc),
		}
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("consume output:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		wantContains(t, "stderr", res.stderr, "consumed 5 records")

		// One partition, in offset order, as JSON; then a Go template from
		// offset 1 of the same partition.
		type kv struct{ k, v string }
		var inPA []kv
		for _, r := range []kv{{"alice", "1"}, {"bob", "2"}, {"carol", "3"}, {"alice", "4"}} {
			if murmur2Partition([]byte(r.k), 3) == pa {
				inPA = append(inPA, r)
			}
		}
		res = mustCLI(t, 0, "", "consume", topic, bs, "--partition", fmt.Sprint(pa), "--count", "2", "--format", "json", "-q")
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		if len(lines) != 2 {
			t.Fatalf("json consume of partition %d --count 2 printed %d lines:\n%s", pa, len(lines), res.stdout)
		}
		for i, line := range lines {
			want := fmt.Sprintf(`"partition":%d,"offset":%d,`, pa, i)
			want2 := fmt.Sprintf(`"key":%q,"value":%q,"headers":[{"key":"src","value":"cli"}]}`, inPA[i].k, inPA[i].v)
			if !strings.Contains(line, want) || !strings.Contains(line, want2) {
				t.Errorf("json line %d: %s\nwant it to contain %s and %s", i, line, want, want2)
			}
		}
		res = mustCLI(t, 0, "", "consume", topic, bs, "--partition", fmt.Sprint(pa), "--from", "1", "--count", "1", "--format", `{{.Key}}@{{.Offset}} {{.Header "src"}}`)
		if want := inPA[1].k + "@1 cli"; strings.TrimSpace(res.stdout) != want {
			t.Errorf("template consume from offset 1: %q, want %q", res.stdout, want)
		}
		// From the end with an idle timeout: nothing, and a clean exit.
		res = mustCLI(t, 0, "", "consume", topic, bs, "--from", "end", "--timeout", "300ms")
		if res.stdout != "" {
			t.Errorf("consume --from end printed %q", res.stdout)
		}
	})

	t.Run("describe", func(t *testing.T) {
		res := mustCLI(t, 0, "", "topic", "describe", topic, bs)
		wantContains(t, "stdout", res.stdout, "Topic:", topic, "Partitions:", "retention.ms=3600000", "LOG-END")
		ends := endOffsets(t, b.Addr, topic)
		rows := 0
		for _, line := range strings.Split(res.stdout, "\n") {
			f := strings.Fields(line)
			if len(f) < 7 || f[0] == "PARTITION" {
				continue
			}
			var p int32
			if _, err := fmt.Sscan(f[0], &p); err != nil {
				continue
			}
			rows++
			// PARTITION LEADER EPOCH REPLICAS ISR LOG-START LOG-END
			if f[1] != "1" || f[3] != "1" || f[4] != "1" {
				t.Errorf("partition row %q: want leader, replicas and ISR 1", line)
			}
			if f[5] != "0" || f[6] != fmt.Sprint(ends[p]) {
				t.Errorf("partition row %q: want log start 0 and log end %d", line, ends[p])
			}
		}
		if rows != 3 {
			t.Errorf("describe shows %d partition rows, want 3:\n%s", rows, res.stdout)
		}
		res = mustCLI(t, 1, "", "topic", "describe", "no-such-topic", bs)
		wantContains(t, "stderr", res.stderr, `topic "no-such-topic" does not exist`)
	})

	t.Run("alter", func(t *testing.T) {
		res := mustCLI(t, 0, "", "topic", "alter", topic, bs, "--partitions", "5", "--config", "retention.ms=7200000", "--config", "cleanup.policy=compact")
		wantContains(t, "stdout", res.stdout, "partitions 3 -> 5", "set retention.ms=7200000")
		res = mustCLI(t, 0, "", "topic", "describe", topic, bs)
		wantContains(t, "stdout", res.stdout, "retention.ms=7200000", "cleanup.policy=compact")
		if !strings.Contains(res.stdout, "Partitions:") || !strings.Contains(strings.Join(strings.Fields(res.stdout), " "), "Partitions: 5") {
			t.Errorf("describe after alter does not show 5 partitions:\n%s", res.stdout)
		}
		mustCLI(t, 0, "", "topic", "alter", topic, bs, "--delete-config", "retention.ms")
		res = mustCLI(t, 0, "", "topic", "describe", topic, bs)
		if strings.Contains(res.stdout, "retention.ms") {
			t.Errorf("retention.ms still shown after --delete-config:\n%s", res.stdout)
		}
		res = mustCLI(t, 1, "", "topic", "alter", topic, bs, "--partitions", "2")
		wantContains(t, "stderr", res.stderr, "cannot reduce")
		res = mustCLI(t, 1, "", "topic", "alter", topic, bs, "--config", "retention.ms=banana")
		wantContains(t, "stderr", res.stderr, `topic "cli-orders"`)
		res = mustCLI(t, 2, "", "topic", "alter", topic, bs)
		wantContains(t, "stderr", res.stderr, "nothing to change")
	})

	t.Run("errors", func(t *testing.T) {
		res := mustCLI(t, 1, "k:v\nno separator here\n", "produce", topic, bs, "--key-separator", ":")
		wantContains(t, "stderr", res.stderr, "line 2 has no key separator")
		res = mustCLI(t, 1, "x\n", "produce", "missing-topic", bs)
		wantContains(t, "stderr", res.stderr, `topic "missing-topic" does not exist`)
		res = mustCLI(t, 1, "", "consume", "missing-topic", bs, "--count", "1")
		wantContains(t, "stderr", res.stderr, `topic "missing-topic" does not exist`)
		res = mustCLI(t, 1, "x\n", "produce", topic, bs, "--partition", "9")
		wantContains(t, "stderr", res.stderr, "partition 9 does not exist")
		res = mustCLI(t, 2, "", "consume", topic, bs, "--from", "yesterday")
		wantContains(t, "stderr", res.stderr, `--from "yesterday"`)
		closed := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		res = mustCLI(t, 1, "", "topic", "list", "--bootstrap", closed)
		wantContains(t, "stderr", res.stderr, "cannot reach broker at "+closed)
	})

	t.Run("delete", func(t *testing.T) {
		res := mustCLI(t, 0, "", "topic", "delete", topic, bs)
		wantContains(t, "stdout", res.stdout, `deleted topic "cli-orders"`)
		res = mustCLI(t, 0, "", "topic", "list", bs)
		if strings.Contains(res.stdout, topic) {
			t.Errorf("deleted topic still listed:\n%s", res.stdout)
		}
		res = mustCLI(t, 1, "", "topic", "delete", topic, bs)
		wantContains(t, "stderr", res.stderr, `topic "cli-orders" does not exist`)
		mustCLI(t, 0, "", "topic", "delete", topic, bs, "--if-exists")
	})
}
