package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// WriteTxnMarkers is served at Kafka 4.4's versions, 1 to 2 (v2 carries
// the marker's transaction version, KIP-890): an abort marker sent at v2,
// as kafka-transactions.sh abort does through the Admin client, closes an
// open transaction and moves the last stable offset past it.
func TestWriteTxnMarkersV2(t *testing.T) {
	b := startBroker(t)
	const topic = "txn-markers-v2"
	createTopic(t, b.Addr, topic, 1, nil)
	adm := newAdmin(t, b.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	vs, err := adm.ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, bv := range vs {
		if min, max, ok := bv.KeyVersions(27); !ok || min != 1 || max != 2 {
			t.Fatalf("WriteTxnMarkers advertised %d-%d (%v), want 1-2", min, max, ok)
		}
	}
	p, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.TransactionalID("tx-markers-v2"), kgo.DefaultProduceTopic(topic),
		kgo.TransactionTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("open")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := p.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lso := func() int64 {
		t.Helper()
		offs, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := offs.Lookup(topic, 0)
		return o.Offset
	}
	if got := lso(); got != 0 {
		t.Fatalf("last stable offset %d with the transaction open, want 0", got)
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 2
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch, m.TransactionVersion = pid, epoch, false, 0, 2
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, []int32{0}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	cl := adminClient(t, b.Addr)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Markers) != 1 || len(resp.Markers[0].Topics) != 1 || len(resp.Markers[0].Topics[0].Partitions) != 1 {
		t.Fatalf("answer %+v", resp)
	}
	if err := kerr.ErrorForCode(resp.Markers[0].Topics[0].Partitions[0].ErrorCode); err != nil {
		t.Fatalf("abort marker at v2: %v", err)
	}
	if got := lso(); got != 2 {
		t.Fatalf("last stable offset %d after the abort marker, want 2 (record and marker)", got)
	}
}

func adminClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
