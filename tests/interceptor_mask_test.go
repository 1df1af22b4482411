package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/hooks/hookstest"
)

// TestInterceptorMaskPerPrincipal consumes a topic whose fetch interceptor
// is examples/interceptor-mask as two SASL/PLAIN principals: bob gets the
// configured fields masked and the values that cannot be masked dropped,
// their offsets left as gaps he moves past (also at the end of the log);
// alice, allow-listed, gets every record as produced; a follower's fetch
// goes down the follower path; DescribeConfigs lists gregor.interceptor.fetch.
func TestInterceptorMaskPerPrincipal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module")
	}
	wasm := hookstest.BuildGo(t, "../examples/interceptor-mask")
	secure := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b := startExtBroker(t, fmt.Sprintf(`[[listeners.extra]]
name = "SECURE"
address = %q
protocol = "SASL_PLAINTEXT"

[security]
sasl_mechanisms = ["PLAIN"]

[extensions.pii-mask]
kind = "interceptor"
wasm = %q

[extensions.pii-mask.config]
fields = ["ssn", "card.number"]
allow = ["User:alice"]
`, secure, wasm))
	createSCRAMUsers(t, b.Kafka, map[string]string{"alice": "a-pw", "bob": "b-pw"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic = "customers"
	ic := "pii-mask"
	createTopic(t, b.Kafka, topic, 1, map[string]*string{"gregor.interceptor.fetch": &ic})

	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	stored := []string{
		`{"name":"Ada","ssn":"123-45"}`,
		`plain text`, // not JSON: dropped for bob
		`{"card":{"number":"4111","exp":"12/30"},"name":"Bo"}`,
		`also not json`, // dropped, and then the last batch of the log
	}
	for _, v := range stored { // one batch each
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	consume := func(user, pw string, n int) []*kgo.Record {
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms(user, pw)["PLAIN"]),
			kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		var got []*kgo.Record
		for len(got) < n {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("%s consumed %d of %d records", user, len(got), n)
			}
			fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("%s: %v", user, err) })
			got = append(got, fs.Records()...)
		}
		return got
	}
	describe := func(rs []*kgo.Record) string {
		var s []string
		for _, r := range rs {
			s = append(s, fmt.Sprintf("%d %s", r.Offset, r.Value))
		}
		return strings.Join(s, "|")
	}
	if got, want := describe(consume("alice", "a-pw", 4)), "0 "+stored[0]+"|1 "+stored[1]+"|2 "+stored[2]+"|3 "+stored[3]; got != want {
		t.Fatalf("alice got %s\nwant %s", got, want)
	}
	// A record after the dropped tail: bob's consumer moved past offset 3.
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(`{"ssn":"999","name":"Cy"}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	want := `0 {"name":"Ada","ssn":"****"}|2 {"card":{"number":"****","exp":"12/30"},"name":"Bo"}|4 {"ssn":"****","name":"Cy"}`
	if got := describe(consume("bob", "b-pw", 3)); got != want {
		t.Fatalf("bob got %s\nwant %s", got, want)
	}

	// A fetch with a replica id goes down the follower path, which never
	// intercepts: on this single broker there is no follower, neither an
	// unknown 7 nor the broker itself (node 1), so it answers
	// NOT_LEADER_OR_FOLLOWER, as Kafka does, where a consumer's fetch is
	// masked. A client on the SASL listener is no broker at all: followers
	// fetch on the inter-broker listener.
	for _, replica := range []int32{7, 1} {
		resp := rawFetch(t, ctx, prod, b.Kafka, topic, replica)
		if resp.ErrorCode != kerr.NotLeaderForPartition.Code || len(resp.RecordBatches) != 0 {
			t.Fatalf("follower fetch as %d: %+v, want NOT_LEADER_OR_FOLLOWER", replica, resp)
		}
	}
	bobCl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms("bob", "b-pw")["PLAIN"]))
	if err != nil {
		t.Fatal(err)
	}
	defer bobCl.Close()
	if resp := rawFetch(t, ctx, bobCl, b.Kafka, topic, 1); resp.ErrorCode != kerr.TopicAuthorizationFailed.Code || len(resp.RecordBatches) != 0 {
		t.Fatalf("follower fetch by bob on the SASL listener: %+v, want TOPIC_AUTHORIZATION_FAILED", resp)
	}

	rc, err := newAdmin(t, b.Kafka).DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rc.On(topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range cfg.Configs {
		if c.Key == "gregor.interceptor.fetch" {
			found = c.MaybeValue() == "pii-mask"
		}
	}
	if !found {
		t.Fatalf("DescribeConfigs does not list gregor.interceptor.fetch=pii-mask: %+v", cfg.Configs)
	}
}

// TestInterceptorMaskShareFetch: a share consumer (anonymous, so not
// allow-listed) gets masked values from ShareFetch, and the acquired
// ranges still cover the offset of the record the module dropped.
func TestInterceptorMaskShareFetch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module")
	}
	wasm := hookstest.BuildGo(t, "../examples/interceptor-mask")
	b := startExtBroker(t, fmt.Sprintf(`[groups]
group_initial_rebalance_delay_ms = 0

[extensions.pii-mask]
kind = "interceptor"
wasm = %q

[extensions.pii-mask.config]
fields = ["ssn"]
`, wasm))
	topic, group := "share-masked", "sg-masked"
	ic := "pii-mask"
	createTopic(t, b.Kafka, topic, 1, map[string]*string{"gregor.interceptor.fetch": &ic})
	shareEarliest(t, b.Kafka, group)
	for _, v := range []string{`{"ssn":"1"}`, `not json`, `{"ssn":"3"}`} {
		produceValues(t, b.Kafka, topic, v) // one batch each
	}
	m := newRawShareMember(t, b.Kafka, group, "m1")
	m.join(topic)
	p := m.fetch(topicID(t, b.Kafka, topic), 0, 5*time.Second)
	if p.ErrorCode != 0 {
		t.Fatalf("ShareFetch: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	if got := acquiredOffsets(p); len(got) != 3 {
		t.Fatalf("acquired %v, want offsets 0..2", got)
	}
	var got []string
	it := record.Batches(p.Records)
	for it.Next() {
		h := it.Header()
		if err := record.Records(it.Batch(), 1<<20, func(r record.Record) error {
			got = append(got, fmt.Sprintf("%d %s", h.BaseOffset+int64(r.OffsetDelta), r.Value))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if s := strings.Join(got, "|"); s != `0 {"ssn":"****"}|2 {"ssn":"****"}` {
		t.Fatalf("share consumer got %s", s)
	}

	// Browsing the partition over HTTP shows what a consumer gets.
	resp, err := http.Get("http://" + b.HTTP + "/api/v1/topics/" + topic + "/partitions/0/records?offset=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Records []struct {
			Offset int64  `json:"offset"`
			Value  []byte `json:"value"`
		} `json:"records"`
		NextOffset int64 `json:"next_offset"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("records page: status %d, %v", resp.StatusCode, err)
	}
	got = got[:0]
	for _, r := range page.Records {
		got = append(got, fmt.Sprintf("%d %s", r.Offset, r.Value))
	}
	if s := strings.Join(got, "|"); s != `0 {"ssn":"****"}|2 {"ssn":"****"}` || page.NextOffset != 3 {
		t.Fatalf("HTTP records page %s, next offset %d", s, page.NextOffset)
	}
}

// rawFetch fetches partition 0 of topic from offset 0 in one sessionless
// Fetch, as replica (-1: a consumer), and returns the partition's answer.
func rawFetch(t *testing.T, ctx context.Context, cl *kgo.Client, addr, topic string, replica int32) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.ReplicaState.ID, req.ReplicaState.Epoch = replica, replica, -1
	req.MaxBytes, req.MaxWaitMillis, req.SessionEpoch = 1<<20, 0, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	topics, err := newAdmin(t, addr).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rt.TopicID = topics[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = 1<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch answer shape %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// fetchedValues are the values of a fetched record set's data batches.
func fetchedValues(t *testing.T, set []byte) []string {
	t.Helper()
	var got []string
	it := record.Batches(set)
	for it.Next() {
		if err := record.Records(it.Batch(), 1<<20, func(r record.Record) error {
			got = append(got, string(r.Value))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	return got
}

// TestInterceptorFetchHostileModules: a fetch interceptor that exits, loops
// past its time limit or changes the record count makes the partition
// answer UNKNOWN_SERVER_ERROR with no records under on_error = "reject",
// as does a name broker.toml does not declare; "accept" sends the records
// as stored, and the broker keeps serving other topics.
func TestInterceptorFetchHostileModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module")
	}
	wasm := hookstest.BuildGo(t, "../hooks/testdata/intercept")
	var exts strings.Builder
	decl := func(name, mode, extra string) {
		fmt.Fprintf(&exts, "[extensions.%s]\nkind = \"interceptor\"\nwasm = %q\nconfig = { mode = %q }\n%s\n", name, wasm, mode, extra)
	}
	decl("loop", "loop", "timeout_ms = 200\n")
	decl("exit", "exit", "")
	decl("shrink", "shrink", "")
	decl("exit-accept", "exit", "on_error = \"accept\"\n")
	b := startExtBroker(t, exts.String())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, name := range []string{"loop", "exit", "shrink", "exit-accept", "undeclared", ""} {
		topic := "f-" + name
		var configs map[string]*string
		if name != "" {
			ic := name
			configs = map[string]*string{"gregor.interceptor.fetch": &ic}
		}
		createTopic(t, b.Kafka, topic, 1, configs)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("stored")}).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
	for _, topic := range []string{"f-loop", "f-exit", "f-shrink", "f-undeclared"} {
		p := rawFetch(t, ctx, cl, b.Kafka, topic, -1)
		if p.ErrorCode != kerr.UnknownServerError.Code || len(p.RecordBatches) != 0 {
			t.Fatalf("%s: code %d with %d record bytes, want UNKNOWN_SERVER_ERROR and none", topic, p.ErrorCode, len(p.RecordBatches))
		}
	}
	for _, topic := range []string{"f-exit-accept", "f-"} {
		p := rawFetch(t, ctx, cl, b.Kafka, topic, -1)
		if got := fetchedValues(t, p.RecordBatches); p.ErrorCode != 0 || len(got) != 1 || got[0] != "stored" {
			t.Fatalf("%s: code %d, values %q, want the stored record", topic, p.ErrorCode, got)
		}
	}
}
