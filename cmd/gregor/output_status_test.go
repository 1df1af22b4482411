package main

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// TestStatusOutputAgainstABroker decodes the JSON of cluster status, txn
// describe and producers describe against an in-process broker holding an
// open transaction, and checks completion, next-step advice and exit codes.
func TestStatusOutputAgainstABroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	targets, stop, err := startBenchBroker(ctx, config.DurabilityPageCache, []string{benchPlaintext})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	bs := targets[0].Addr
	cli := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCapture(t, "", append(args, "--bootstrap", bs)...)
		if code != exitOK {
			t.Fatalf("gregor %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	cli("topic", "create", "payments", "--partitions", "2")

	// A transaction left open on payments-1.
	tx, err := kgo.NewClient(kgo.SeedBrokers(bs), kgo.TransactionalID("pay-tx"), kgo.DefaultProduceTopic("payments"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	var cs struct {
		ClusterID    string `json:"cluster_id"`
		ControllerID int32  `json:"controller_id"`
		Brokers      []struct {
			ID     int32 `json:"id"`
			Fenced bool  `json:"fenced"`
		} `json:"brokers"`
		UnderReplicated []statusPartition `json:"under_replicated"`
		Offline         []statusPartition `json:"offline"`
		Partitions      int               `json:"partitions"`
		Quorum          *statusQuorum     `json:"quorum"`
	}
	decode(t, cli("cluster", "status", "-o", "json"), &cs)
	if q := cs.Quorum; q == nil || q.LeaderID != cs.ControllerID || q.HighWatermark < 1 || len(q.Replicas) != 1 ||
		q.Replicas[0].Status != "Leader" || q.Replicas[0].Lag != 0 || q.Replicas[0].LogEndOffset < q.HighWatermark {
		t.Fatalf("cluster status quorum: %+v", cs.Quorum)
	}
	if cs.ClusterID == "" || len(cs.Brokers) != 1 || cs.Brokers[0].Fenced || cs.Brokers[0].ID != cs.ControllerID ||
		cs.UnderReplicated == nil || len(cs.UnderReplicated) != 0 || len(cs.Offline) != 0 || cs.Partitions < 2 {
		t.Fatalf("cluster status: %+v", cs)
	}

	var txns []txnView
	decode(t, cli("txn", "describe", "pay-tx", "-o", "json"), &txns)
	if len(txns) != 1 || txns[0].State != "Ongoing" || txns[0].StartTimestamp == nil ||
		len(txns[0].Partitions) != 1 || txns[0].Partitions[0] != (txnPartitionView{"payments", 1}) {
		t.Fatalf("txn describe: %+v", txns)
	}
	if y := cli("txn", "describe", "pay-tx", "-o", "yaml"); !strings.Contains(y, "- transactional_id: pay-tx\n") ||
		!strings.Contains(y, "  state: Ongoing\n") {
		t.Fatalf("txn describe yaml:\n%s", y)
	}

	var producers []producerView
	decode(t, cli("producers", "describe", "payments", "-o", "json"), &producers)
	if len(producers) != 1 || producers[0].Partition != 1 || producers[0].ProducerID != txns[0].ProducerID ||
		producers[0].CurrentTxnStartOffset == nil || *producers[0].CurrentTxnStartOffset != 0 || producers[0].LastTimestamp == nil {
		t.Fatalf("producers describe: %+v", producers)
	}
	if err := tx.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}

	// Completion of topic and group names on the commands that take them
	// (the broker's address from the environment, so that the completed
	// word stays last).
	t.Setenv(bootstrapEnv, bs)
	var reset groupResetView
	decode(t, cli("group", "reset-offsets", "audit", "--topic", "payments", "--to-latest", "--execute", "-o", "json"), &reset)
	// The aborted transaction left a record and an abort marker on
	// partition 1: its log end is 2.
	want := groupResetView{Group: "audit", Committed: true, Offsets: []groupResetOffsets{
		{Topic: "payments", Partition: 0, NewOffset: 0}, {Topic: "payments", Partition: 1, NewOffset: 2}}}
	if !reflect.DeepEqual(reset, want) {
		t.Fatalf("reset-offsets: %+v", reset)
	}
	decode(t, cli("group", "reset-offsets", "audit", "--topic", "payments:1", "--shift-by", "-1", "-o", "json"), &reset)
	if len(reset.Offsets) != 1 || reset.Committed || reset.Offsets[0].CurrentOffset == nil || *reset.Offsets[0].CurrentOffset != 2 ||
		reset.Offsets[0].NewOffset != 1 {
		t.Fatalf("reset-offsets dry run: %+v", reset)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"produce", "pay"}, "payments\n"},
		{[]string{"consume", ""}, "payments\n"},
		{[]string{"topic", "alter", "p"}, "payments\n"},
		{[]string{"topic", "delete", "p"}, "payments\n"},
		{[]string{"producers", "describe", ""}, "payments\n"},
		{[]string{"group", "delete", "a"}, "audit\n"},
		{[]string{"group", "reset-offsets", ""}, "audit\n"},
		{[]string{"group", "reset-offsets", "audit", "--topic", "pa"}, "payments\n"},
		// One name only: nothing more after it.
		{[]string{"consume", "payments", ""}, ":4\n"},
	} {
		if _, out, _ := runCapture(t, "", append([]string{"__complete"}, tt.args...)...); !strings.HasPrefix(out, tt.want) {
			t.Errorf("complete %v: %q, want it to start with %q", tt.args, out, tt.want)
		}
	}

	// Next steps for common failures, exit 1; usage mistakes exit 2.
	dead := closedAddr(t)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"group", "delete", "nope", "--bootstrap", bs}, exitError, "Next: `gregor group list`"},
		{[]string{"cluster", "status", "--bootstrap", dead}, exitError, "Next: check that a broker is running there"},
		{[]string{"txn", "describe", "--bootstrap", bs}, exitUsage, "missing TRANSACTIONAL-ID argument"},
		{[]string{"producers", "describe", "a", "b", "--bootstrap", bs}, exitUsage, "expected one TOPIC"},
		{[]string{"cluster", "status", "-o", "csv", "--bootstrap", bs}, exitUsage, `--output "csv"`},
		{[]string{"mirror", "status", "--config", "m.toml", "--json", "-o", "yaml"}, exitUsage, "--json and --output yaml disagree"},
	} {
		code, _, errOut := runCapture(t, "", tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("gregor %v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
}
