package tests

import (
	"regexp"
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
