package tests

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/clients/franzgo"
	"github.com/gregorbroker/gregor/sdk/clients/kafkago"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// regionRecord is one keyed record of the placement test; region "" means
// no region header.
type regionRecord struct {
	key, region string
}

// regionPlacement is examples/wasm-region's rule, written out natively:
// with regions eu, us, ap each region owns a third of the partitions and a
// key is placed by murmur2 within its region's share; other records are
// placed by murmur2 over all partitions.
func regionPlacement(r regionRecord, n int32) int32 {
	regions := []string{"eu", "us", "ap"}
	for i, name := range regions {
		if r.region != name {
			continue
		}
		k := int32(len(regions))
		if n < k {
			return int32(i) % n
		}
		lo, hi := int32(i)*n/k, (int32(i)+1)*n/k
		return lo + partitioner.KeyPartition([]byte(r.key), hi-lo)
	}
	return partitioner.KeyPartition([]byte(r.key), n)
}

// The "done when": a topic placed by the example WASM partitioner
// gets the same records on the same partitions whether they are written
// through the HTTP endpoint, `gregor produce --partitioner-wasm`, a
// kafka-go Writer with the sdk Balancer or a franz-go client with the sdk
// Partitioner; and the placement check rejects a plain murmur2 producer's
// misplaced record, naming the expected partition.
func TestExtensionPlacementAgreesEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module and the gregor binary")
	}
	wasm := hookstest.BuildGo(t, "../examples/wasm-region")
	b := startExtBroker(t, fmt.Sprintf("[extensions.region]\nkind = \"partitioner\"\nwasm = %q\n", wasm))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	const topic, parts = "orders", int32(12)
	region, enforce := "region", "true"
	if _, err := newAdmin(t, b.Kafka).CreateTopic(ctx, parts, 1,
		map[string]*string{"gregor.partitioner": &region, "gregor.partitioner.enforce": &enforce}, topic); err != nil {
		t.Fatal(err)
	}

	var recs []regionRecord
	regions := []string{"eu", "us", "ap", ""}
	for i := range 48 {
		recs = append(recs, regionRecord{key: fmt.Sprintf("order-%02d", i), region: regions[i%len(regions)]})
	}
	want := make([]int32, len(recs))
	spread := map[int32]bool{}
	for i, r := range recs {
		want[i] = regionPlacement(r, parts)
		spread[want[i]] = true
	}
	if len(spread) < 6 {
		t.Fatalf("the test records reach only partitions %v", spread)
	}

	// (a) HTTP, one request for all records.
	var rest []restRecord
	for i, r := range recs {
		rr := restRecord{Key: r.key, Value: fmt.Sprintf("http-%d", i)}
		if r.region != "" {
			rr.Headers = map[string]string{"region": r.region}
		}
		rest = append(rest, rr)
	}
	status, ans := postRecords(t, b.HTTP, topic, rest)
	if status != 200 || len(ans.Offsets) != len(recs) {
		t.Fatalf("HTTP produce: %d %+v", status, ans)
	}
	for i, o := range ans.Offsets {
		if o.Partition == nil || *o.Partition != want[i] {
			t.Fatalf("HTTP record %d (%+v): answer %+v, want partition %d", i, recs[i], o, want[i])
		}
	}

	// (b) gregor produce --partitioner-wasm, one run per region header
	// (the CLI puts its --header on every record).
	byRegion := map[string][]string{}
	for i, r := range recs {
		byRegion[r.region] = append(byRegion[r.region], fmt.Sprintf("%s:cli-%d\n", r.key, i))
	}
	for _, rg := range regions {
		args := []string{"produce", topic, "-K", ":", "--partitioner-wasm", wasm, "--bootstrap", b.Kafka}
		if rg != "" {
			args = append(args, "-H", "region="+rg)
		}
		mustCLI(t, 0, strings.Join(byRegion[rg], ""), args...)
	}
	// Without the module the CLI places by murmur2, and the placement
	// check refuses what lands elsewhere.
	misplaced := ""
	for _, r := range recs {
		if r.region == "eu" && partitioner.KeyPartition([]byte(r.key), parts) != regionPlacement(r, parts) {
			misplaced = r.key
			break
		}
	}
	if misplaced == "" {
		t.Fatal("no eu record that murmur2 would misplace")
	}
	res := runCLI(t, misplaced+":cli-murmur2\n", nil, "produce", topic, "-K", ":", "-H", "region=eu", "--bootstrap", b.Kafka)
	if res.code == 0 || !strings.Contains(res.stderr, "INVALID_RECORD") {
		t.Fatalf("murmur2 CLI produce of a misplaced record: exit %d\n%s", res.code, res.stderr)
	}

	// The sdk client adapters load the same module through hooks.
	p, err := hooks.LoadPartitioner(ctx, wasm, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	onError := func(err error) { t.Errorf("client-side partitioner failed: %v", err) }

	// (c) kafka-go Writer with the sdk Balancer.
	bal := kafkago.NewBalancer(p)
	bal.OnError = onError
	tr := &kafka.Transport{MetadataTTL: time.Second}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(b.Kafka), Transport: tr, Topic: topic, Balancer: bal,
		RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond, MaxAttempts: 3}
	msgs := make([]kafka.Message, len(recs))
	for i, r := range recs {
		msgs[i] = kafka.Message{Key: []byte(r.key), Value: fmt.Appendf(nil, "kafkago-%d", i)}
		if r.region != "" {
			msgs[i].Headers = []kafka.Header{{Key: "region", Value: []byte(r.region)}}
		}
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("kafka-go: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// (d) franz-go with the sdk Partitioner.
	fp := franzgo.NewPartitioner(p)
	fp.OnError = onError
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.RecordPartitioner(fp))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	krecs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krecs[i] = &kgo.Record{Topic: topic, Key: []byte(r.key), Value: fmt.Appendf(nil, "franzgo-%d", i)}
		if r.region != "" {
			krecs[i].Headers = []kgo.RecordHeader{{Key: "region", Value: []byte(r.region)}}
		}
	}
	if err := cl.ProduceSync(ctx, krecs...).FirstErr(); err != nil {
		t.Fatalf("franz-go: %v", err)
	}

	// Every record, from every path, is where the module said.
	got := consumeAll(t, b.Kafka, topic, 4*len(recs))
	seen := map[string]bool{}
	for _, r := range got {
		var path string
		var i int
		if _, err := fmt.Sscanf(strings.Replace(string(r.Value), "-", " ", 1), "%s %d", &path, &i); err != nil || i < 0 || i >= len(recs) {
			t.Fatalf("unexpected record %q in partition %d", r.Value, r.Partition)
		}
		seen[string(r.Value)] = true
		if string(r.Key) != recs[i].key || r.Partition != want[i] {
			t.Errorf("%s record %d (%+v) in partition %d with key %q, want partition %d", path, i, recs[i], r.Partition, r.Key, want[i])
		}
		var hdr string
		for _, h := range r.Headers {
			if h.Key == "region" {
				hdr = string(h.Value)
			}
		}
		if hdr != recs[i].region {
			t.Errorf("%s record %d: region header %q, want %q", path, i, hdr, recs[i].region)
		}
	}
	if len(seen) != 4*len(recs) {
		t.Errorf("consumed %d distinct records, want %d", len(seen), 4*len(recs))
	}

	// A plain murmur2 producer writes the misplaced key where Kafka's
	// default partitioner puts it and is refused.
	plain, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.RecordRetries(0), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	bad := &kgo.Record{Topic: topic, Key: []byte(misplaced), Value: []byte("murmur2"),
		Headers: []kgo.RecordHeader{{Key: "region", Value: []byte("eu")}}}
	err = plain.ProduceSync(ctx, bad).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("murmur2 producer of a misplaced record: %v, want INVALID_RECORD", err)
	}
	wrong := partitioner.KeyPartition([]byte(misplaced), parts)
	if bad.Partition != wrong {
		t.Fatalf("the murmur2 producer chose partition %d, murmur2 says %d", bad.Partition, wrong)
	}
	// The answer names the expected partition (Produce's error_message,
	// which franz-go does not surface: read it from the response).
	batch, err := record.Encode(record.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]record.Record{{Key: []byte(misplaced), Value: []byte("murmur2"), Headers: []record.RecordHeader{{Key: "region", Value: []byte("eu")}}}})
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	tds, err := newAdmin(t, b.Kafka).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, tds[topic].ID // by ID from Produce v13
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = wrong, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	pr := resp.Topics[0].Partitions[0]
	expected := regionPlacement(regionRecord{key: misplaced, region: "eu"}, parts)
	wantMsg := fmt.Sprintf("belongs in partition %d by partitioner region, not partition %d", expected, wrong)
	if pr.ErrorCode != kerr.InvalidRecord.Code || pr.ErrorMessage == nil || !strings.Contains(*pr.ErrorMessage, wantMsg) {
		t.Fatalf("raw produce of a misplaced record: code %d message %v, want INVALID_RECORD with %q", pr.ErrorCode, pr.ErrorMessage, wantMsg)
	}
	// Nothing misplaced was stored.
	offsets, err := newAdmin(t, b.Kafka).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	var ends []string
	offsets.Each(func(o kadm.ListedOffset) {
		total += o.Offset
		ends = append(ends, fmt.Sprintf("%d:%d", o.Partition, o.Offset))
	})
	sort.Strings(ends)
	if total != int64(4*len(recs)) {
		t.Fatalf("end offsets %v hold %d records, want %d", ends, total, 4*len(recs))
	}
}
