package tests

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// TestEOSMemberAbortsAfterFailedProduce: a member of the exactly-once
// workload whose transaction had a produce fail must not commit it.
// franz-go commits whatever succeeded when asked to (Java's producer refuses
// the commit after a failed send), so committing there would commit the
// input offsets of a record that never reached the output: the fault suite
// reported exactly that as a lost commit (seed 18, kill-offsets-leader and
// kill-txn-leader: produces failed with "broker closed the connection
// immediately during api versions" while a leader was killed). Here the
// failure is MESSAGE_TOO_LARGE from the output topic's max.message.bytes.
func TestEOSMemberAbortsAfterFailedProduce(t *testing.T) {
	b := startBroker(t, func(c *config.Config) {
		c.Groups.GroupInitialRebalanceDelayMs = 0
		c.Groups.OffsetsTopicPartitions = 1
		c.Transactions.StateLogPartitions = 1
	})
	e := newEOSWorkload("member-in", "member-out", "member-eos", 1)
	limit := "1024"
	createTopic(t, b.Addr, e.in, 1, nil)
	createTopic(t, b.Addr, e.out, 1, map[string]*string{"max.message.bytes": &limit})

	in, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	big := make([]byte, 8192) // incompressible, past the output's limit
	_, _ = rand.NewChaCha8([32]byte{1}).Read(big)
	if err := in.ProduceSync(ctx, &kgo.Record{Topic: e.in, Key: []byte("k00"), Value: []byte("k00-0000000")},
		&kgo.Record{Topic: e.in, Key: []byte("k01"), Value: big}).FirstErr(); err != nil {
		t.Fatalf("produce input: %v", err)
	}

	sess, err := e.session([]string{b.Addr}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var fs kgo.Fetches
	for n := 0; n < 2 && ctx.Err() == nil; {
		got := sess.PollRecords(ctx, 10)
		n += got.NumRecords()
		fs = append(fs, got...)
	}
	if fs.NumRecords() != 2 {
		t.Fatalf("polled %d input records, want 2 (%v)", fs.NumRecords(), ctx.Err())
	}
	if err := sess.Begin(); err != nil {
		t.Fatal(err)
	}
	outcome, err := e.copyTxn(sess, fs, "m0.0")

	e.mu.Lock()
	failed := ""
	for _, at := range e.outAcked {
		if strings.HasPrefix(at, "failed") {
			failed = at
		}
	}
	e.mu.Unlock()
	if failed == "" {
		t.Fatalf("no produce of the transaction failed (outcome %s, %v); the test needs one to", outcome, err)
	}
	if outcome == "commit" {
		t.Fatalf("a transaction whose produce failed (%s) was committed", failed)
	}

	// Nothing of the input was committed for the group: the next owner
	// copies it again.
	adm := newAdmin(t, b.Addr)
	offsets, err := adm.FetchOffsets(ctx, e.group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup(e.in, 0); ok && o.At > 0 {
		t.Fatalf("input offset %d committed by a transaction that was not (outcome %s)", o.At, outcome)
	}
}
