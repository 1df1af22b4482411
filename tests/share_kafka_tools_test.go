package tests

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaShareGroupTools runs Apache Kafka 4.4's share group tools
// against Gregor: kafka-configs sets share.auto.offset.reset on the group,
// kafka-console-share-consumer reads every record, kafka-share-groups
// lists and describes the group (members, state, offsets) while a member
// is active, resets its offsets once it is empty (a share consumer then
// reads everything again), deletes its offsets and deletes the group.
// Each step is checked against what the broker says through a Kafka
// client. It needs the Kafka jars (scripts/kafka-ref.sh fetch) and java
// (make share-tools runs it alone).
func TestKafkaShareGroupTools(t *testing.T) {
	script, ok := kafkaTools(t)
	if !ok {
		t.Skip("Apache Kafka's jars or java are missing (scripts/kafka-ref.sh fetch)")
	}
	b := startBroker(t, shareConfig)
	topic, group := "tools-share", "tools-sg"
	createTopic(t, b.Addr, topic, 1, nil)
	var values []string
	for i := range 10 {
		values = append(values, fmt.Sprintf("rec-%d", i))
	}
	produceValues(t, b.Addr, topic, values...)
	// tool runs one of Kafka's tools with --bootstrap-server and checks
	// that it exits 0, prints no error and prints every want.
	run := func(args []string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, script, append(args[:1:1], append([]string{"--bootstrap-server", b.Addr}, args[1:]...)...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	tool := func(args []string, want ...string) string {
		t.Helper()
		s, err := run(args)
		if err != nil || strings.Contains(s, "Exception") || regexp.MustCompile(`(?m)^Error`).MatchString(s) {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, s)
		}
		for _, w := range want {
			if !regexp.MustCompile(w).MatchString(s) {
				t.Fatalf("%s: no match for %q in:\n%s", strings.Join(args, " "), w, s)
			}
		}
		return s
	}
	sg := func(args ...string) []string { return append([]string{"kafka-share-groups"}, args...) }

	tool([]string{"kafka-configs", "--alter", "--entity-type", "groups", "--entity-name", group,
		"--add-config", "share.auto.offset.reset=earliest"}, "Completed updating config for group "+group)
	tool([]string{"kafka-configs", "--describe", "--entity-type", "groups", "--entity-name", group},
		"share.auto.offset.reset=earliest")

	// The console share consumer reads (and implicitly accepts) all ten.
	out := tool([]string{"kafka-console-share-consumer", "--topic", topic, "--group", group,
		"--max-messages", "10", "--timeout-ms", "60000"}, "Processed a total of 10 messages")
	for _, v := range values {
		if !regexp.MustCompile(`(?m)^` + v + `$`).MatchString(out) {
			t.Fatalf("console share consumer did not print %s:\n%s", v, out)
		}
	}
	if start, lag := describeShareOffsets(t, b.Addr, group, topic, 0); start != 10 || lag != 0 {
		t.Fatalf("after the console share consumer: start offset %d lag %d, want 10 and 0", start, lag)
	}

	// While a member is active.
	c := startShareConsumer(t, b.Addr, group, topic, kgo.ClientID("tools-member"))
	eventually(t, 30*time.Second, "a stable share group with one member", func() error {
		if g := describeShareGroup(t, b.Addr, group); g.GroupState != "Stable" || len(g.Members) != 1 ||
			len(g.Members[0].Assignment.TopicPartitions) != 1 {
			return fmt.Errorf("state %s, %d members", g.GroupState, len(g.Members))
		}
		return nil
	})
	tool(sg("--list"), `(?m)^`+group+`$`)
	tool(sg("--list", "--state", "Stable"), `(?m)^`+group+`\s+Stable$`)
	tool(sg("--describe", "--group", group, "--members"), group+`\s+\S+\s+\S+\s+tools-member\s+1\s+`+topic+`:0`)
	tool(sg("--describe", "--group", group, "--state"), group+`\s+\S+\s+\(\d+\)\s+Stable\s+1`)
	tool(sg("--describe", "--group", group), `START-OFFSET`, group+`\s+`+topic+`\s+0\s+10\s+0`)
	// Reset needs an empty group: the tool refuses (exit 1) otherwise.
	if out, err := run(sg("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--dry-run")); err == nil ||
		!strings.Contains(out, "Share group '"+group+"' is not empty") {
		t.Fatalf("--reset-offsets of a group with a member: %v\n%s", err, out)
	}
	c.close()
	c.cl.Close() // leaves the group
	groupEmpty(t, b.Addr, group)

	tool(sg("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute"),
		group+`\s+`+topic+`\s+0\s+0`)
	if start, _ := describeShareOffsets(t, b.Addr, group, topic, 0); start != 0 {
		t.Fatalf("after --reset-offsets --to-earliest: start offset %d, want 0", start)
	}
	tool(sg("--describe", "--group", group, "--offsets"), group+`\s+`+topic+`\s+0\s+0\s+10`)
	// Everything is delivered again, once, as a first delivery.
	again := startShareConsumer(t, b.Addr, group, topic)
	eventually(t, 30*time.Second, "the ten records again", func() error {
		if n := len(again.offsets()); n != 10 {
			return fmt.Errorf("%d records read", n)
		}
		return nil
	})
	again.close()
	again.cl.Close()
	for o, d := range again.offsets() {
		if d != 1 {
			t.Fatalf("offset %d redelivered with delivery count %d after the reset, want 1", o, d)
		}
	}
	groupEmpty(t, b.Addr, group)

	tool(sg("--delete-offsets", "--group", group, "--topic", topic), topic+`\s+Successful`)
	tool(sg("--delete", "--group", group), "Deletion of requested share groups \\('"+group+"'\\) was successful")
	if out := tool(sg("--list")); regexp.MustCompile(`(?m)^` + group + `$`).MatchString(out) {
		t.Fatalf("kafka-share-groups --list still lists %s after --delete:\n%s", group, out)
	}
}

// groupEmpty waits until a share group has no members.
func groupEmpty(t *testing.T, addr, group string) {
	t.Helper()
	eventually(t, 30*time.Second, "an empty share group", func() error {
		if s := describeShareGroup(t, addr, group).GroupState; s != "Empty" {
			return fmt.Errorf("state %s", s)
		}
		return nil
	})
}
