package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// gregor group list and describe show share groups: the protocol, the
// group epoch, the members, and per share-partition its start offset,
// log end offset and lag.
func TestShareGroupCLI(t *testing.T) {
	b := startBroker(t, shareConfig)
	topic, group := "share-cli", "sg-cli"
	createTopic(t, b.Addr, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceValues(t, b.Addr, topic, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	id := topicID(t, b.Addr, topic)
	m := newRawShareMember(t, b.Addr, group, "cli-member")
	m.join(topic)
	if got := acquiredOffsets(m.fetch(id, 0, 5*time.Second)); len(got) != 10 {
		t.Fatalf("acquired %v", got)
	}
	if err := m.ack(id, 0, false, rawAck{0, 3, 1}); err != nil {
		t.Fatalf("accept 0-3: %v", err)
	}
	boot := "--bootstrap=" + b.Addr
	res := mustCLI(t, 0, "", "group", "list", boot)
	wantContains(t, "group list", res.stdout, group)
	res = mustCLI(t, 0, "", "group", "describe", group, boot)
	wantContains(t, "describe of a share group", res.stdout, "share/simple", "MEMBERS   1", "cli-member")
	// Start offset 4, log end 10, lag 6.
	if !regexp.MustCompile(topic + `\s+0\s+4\s+10\s+6\s+cli-member`).MatchString(res.stdout) {
		t.Fatalf("describe of a share group: no partition line with start 4, end 10, lag 6:\n%s", res.stdout)
	}
}

// gregor consume --share-group reads as a share group member: it prints
// the records and accepts them, so the share-partition start offset moves
// past them and a second member reads nothing; where the group starts is
// its config, so --from does not apply.
func TestShareGroupCLIConsume(t *testing.T) {
	b := startBroker(t, shareConfig)
	topic, group := "share-cli-consume", "sg-cli-consume"
	createTopic(t, b.Addr, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceValues(t, b.Addr, topic, "a", "b", "c", "d", "e")
	boot := "--bootstrap=" + b.Addr
	res := mustCLI(t, 0, "", "consume", topic, boot, "--share-group", group, "--count", "5", "--timeout", "20s", "-q")
	if got := sortedLines(res.stdout); fmt.Sprint(got) != "[a b c d e]" {
		t.Fatalf("consume --share-group printed %q, want a to e", res.stdout)
	}
	if start, lag := describeShareOffsets(t, b.Addr, group, topic, 0); start != 5 || lag != 0 {
		t.Fatalf("after consume --share-group: start offset %d lag %d, want 5 and 0 (all accepted)", start, lag)
	}
	res = mustCLI(t, 0, "", "consume", topic, boot, "--share-group", group, "--timeout", "2s")
	if res.stdout != "" || !strings.Contains(res.stderr, "consumed 0 records") {
		t.Fatalf("a second consume --share-group read %q (%s), want nothing", res.stdout, res.stderr)
	}
	res = mustCLI(t, 2, "", "consume", topic, boot, "--share-group", group, "--from", "beginning")
	wantContains(t, "consume --share-group --from", res.stderr, "share.auto.offset.reset")
}
