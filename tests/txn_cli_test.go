package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnCLI: a producer leaves a transaction open on one partition; gregor
// producers describe shows it with its start offset, gregor txn list and
// describe show it Ongoing, and gregor txn abort closes it on the partition
// so that the last stable offset moves past it.
func TestTxnCLI(t *testing.T) {
	b := startBroker(t, txnConfig)
	const topic = "txn-cli"
	createTopic(t, b.Addr, topic, 2, nil)
	boot := "--bootstrap=" + b.Addr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := txnClient(t, b.Addr, "cli-tx", kgo.TransactionTimeout(time.Minute))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 1, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	res := mustCLI(t, 0, "", "producers", "describe", topic, boot)
	wantContains(t, "producers describe", res.stdout, "OPEN-TXN-START")
	var pidLine string
	for _, l := range strings.Split(res.stdout, "\n") {
		if f := strings.Fields(l); len(f) == 7 && f[0] == "1" {
			pidLine = l
			if f[6] != "0" {
				t.Fatalf("open transaction start %q, want 0:\n%s", f[6], res.stdout)
			}
		}
	}
	if pidLine == "" {
		t.Fatalf("no producer on partition 1:\n%s", res.stdout)
	}

	res = mustCLI(t, 0, "", "txn", "list", "--state", "Ongoing", boot)
	wantContains(t, "txn list", res.stdout, "cli-tx", "Ongoing")
	res = mustCLI(t, 0, "", "txn", "describe", "cli-tx", boot)
	wantContains(t, "txn describe", res.stdout, "State:            Ongoing", "txn-cli-1")

	adm := newAdmin(t, b.Addr)
	stable := func() int64 {
		offs, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := offs.Lookup(topic, 1)
		return o.Offset
	}
	if lso := stable(); lso != 0 {
		t.Fatalf("last stable offset %d before the abort, want 0", lso)
	}
	mustCLI(t, 2, "", "txn", "abort", "--topic", topic, boot) // usage error
	res = mustCLI(t, 0, "", "txn", "abort", "--topic", topic, "--partition", "1", "--start-offset", "0", boot)
	wantContains(t, "txn abort", res.stdout, "aborted the transaction")
	if lso := stable(); lso != 4 {
		t.Fatalf("last stable offset %d after the abort, want 4 (three records and the marker)", lso)
	}
	if got := readCommitted(t, b.Addr, topic, 0); len(got) != 0 {
		t.Fatalf("read_committed saw %v after the abort", got)
	}
}
