package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/httpapi"
	"github.com/gregorbroker/gregor/core/server"
)

// broker is a broker served in-process for the admin API tests.
type broker struct {
	srv  *server.Server
	base string
	adm  *kadm.Client
	cl   *kgo.Client
}

func startBroker(t *testing.T, modify func(*config.Config)) *broker {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = "127.0.0.1:0"
	if modify != nil {
		modify(&cfg)
	}
	srv, err := server.New(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &broker{srv: srv, base: "http://" + srv.HTTPAddr(), adm: kadm.NewClient(cl), cl: cl}
}

// get fetches path and decodes the JSON answer into out (when not nil);
// it returns the status.
func (b *broker) get(t *testing.T, path, user, pass string, out any) int {
	t.Helper()
	req, err := http.NewRequest("GET", b.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, body)
		}
	}
	return resp.StatusCode
}

func TestAdminAPIAgainstABroker(t *testing.T) {
	b := startBroker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := b.adm.CreateTopic(ctx, 3, 1, map[string]*string{"retention.ms": kadm.StringPtr("86400000")}, "orders"); err != nil {
		t.Fatal(err)
	}
	// Records with known timestamps, headers and JSON values, each to a
	// chosen partition.
	base := time.UnixMilli(1_700_000_000_000)
	type sent struct {
		key, value string
		part       int32
		offset     int64
		ts         int64
	}
	var produced []sent
	for i := 0; i < 30; i++ {
		r := &kgo.Record{Topic: "orders", Partition: int32(i % 3), Key: []byte(fmt.Sprintf("k%02d", i)),
			Value: []byte(fmt.Sprintf(`{"n":%d}`, i)), Timestamp: base.Add(time.Duration(i) * time.Second),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(fmt.Sprint(i))}}}
		res := b.cl.ProduceSync(ctx, r)
		if err := res.FirstErr(); err != nil {
			t.Fatal(err)
		}
		got := res[0].Record
		produced = append(produced, sent{string(r.Key), string(r.Value), got.Partition, got.Offset, r.Timestamp.UnixMilli()})
	}
	// A group committed 4 records of each partition.
	offs := kadm.Offsets{}
	for p := int32(0); p < 3; p++ {
		offs.AddOffset("orders", p, 4, -1)
	}
	if _, err := b.adm.CommitOffsets(ctx, "billing", offs); err != nil {
		t.Fatal(err)
	}

	var c httpapi.Cluster
	if s := b.get(t, "/api/v1/cluster", "", "", &c); s != 200 || len(c.Brokers) != 1 || c.ClusterID != b.srv.ClusterID() || c.Partitions < 3 {
		t.Fatalf("cluster: %d %+v", s, c)
	}
	var topics []httpapi.TopicSummary
	b.get(t, "/api/v1/topics", "", "", &topics)
	found := false
	for _, ts := range topics {
		if ts.Name == "orders" {
			found = true
			if ts.Records != 30 || ts.Partitions != 3 || ts.SizeBytes <= 0 {
				t.Fatalf("orders summary %+v", ts)
			}
		}
	}
	if !found {
		t.Fatalf("orders not listed: %+v", topics)
	}
	var td httpapi.TopicDetail
	if s := b.get(t, "/api/v1/topics/orders", "", "", &td); s != 200 {
		t.Fatalf("topic: %d", s)
	}
	if len(td.PartitionList) != 3 || td.Configs["retention.ms"] != "86400000" || len(td.Overrides) != 1 {
		t.Fatalf("topic detail %+v", td)
	}
	for _, p := range td.PartitionList {
		if p.HighWatermark != 10 || p.LogStartOffset != 0 || p.Leader != 1 || len(p.ISR) != 1 || p.Offline || p.UnderReplicated {
			t.Fatalf("partition %+v", p)
		}
	}

	// Records of partition 1 from offset 2, limited to 5.
	var page httpapi.RecordPage
	if s := b.get(t, "/api/v1/topics/orders/partitions/1/records?offset=2&limit=5", "", "", &page); s != 200 {
		t.Fatalf("records: %d", s)
	}
	var want []sent
	for _, p := range produced {
		if p.part == 1 && p.offset >= 2 {
			want = append(want, p)
		}
	}
	if len(page.Records) != 5 || !page.Truncated || page.NextOffset != 7 || page.HighWatermark != 10 {
		t.Fatalf("page %+v", page)
	}
	for i, r := range page.Records {
		w := want[i]
		if r.Offset != w.offset || string(*r.Key) != w.key || string(*r.Value) != w.value || r.Timestamp != w.ts ||
			len(r.Headers) != 1 || r.Headers[0].Key != "h" {
			t.Fatalf("record %d = %+v (key %q value %q), want %+v", i, r, *r.Key, *r.Value, w)
		}
	}
	// By timestamp: the first record of partition 2 at or after record 20's time.
	ts := produced[20].ts
	if s := b.get(t, fmt.Sprintf("/api/v1/topics/orders/partitions/2/records?timestamp=%d&limit=1", ts+1), "", "", &page); s != 200 {
		t.Fatalf("records by time: %d", s)
	}
	if len(page.Records) != 1 || string(*page.Records[0].Key) != "k23" {
		t.Fatalf("by time: %+v", page.Records)
	}
	// offset=-1: the latest records.
	b.get(t, "/api/v1/topics/orders/partitions/0/records?offset=-1&limit=3", "", "", &page)
	if len(page.Records) != 3 || page.Records[0].Offset != 7 || page.Truncated {
		t.Fatalf("latest: %+v", page)
	}

	var groups []httpapi.GroupSummary
	b.get(t, "/api/v1/groups", "", "", &groups)
	if len(groups) != 1 || groups[0].Group != "billing" || groups[0].Lag != 18 {
		t.Fatalf("groups %+v", groups)
	}
	var gd httpapi.GroupDetail
	b.get(t, "/api/v1/groups/billing", "", "", &gd)
	if len(gd.Offsets) != 3 || gd.LagByTopic["orders"] != 18 || gd.Offsets[0].Lag != 6 || gd.Offsets[0].HighWatermark != 10 {
		t.Fatalf("group %+v", gd)
	}

	// The metrics operators alert on are exported while the workload runs.
	resp, err := http.Get(b.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{
		`gregor_cluster_offline_partitions 0`,
		`gregor_cluster_under_replicated_partitions 0`,
		`gregor_controller_active 1`,
		`gregor_partition_under_replicated{partition="0",topic="orders"} 0`,
		`gregor_partition_isr_shrinks_total{partition="0",topic="orders"} 0`,
		`gregor_partition_records_in_total{partition="1",topic="orders"} 10`,
		`gregor_partition_bytes_in_total{partition="2",topic="orders"}`,
		`gregor_partition_size_bytes{partition="0",topic="orders"}`,
		`gregor_group_lag{group="billing",partition="0",topic="orders"} 6`,
		`gregor_group_lag_sum{group="billing"} 18`,
		`gregor_request_duration_seconds_bucket{api="Produce"`,
	} {
		if !strings.Contains(string(metrics), m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}

	// Every metric the example dashboard charts exists; those of
	// extensions and the mirror appear only when they run.
	dash, err := os.ReadFile("../../examples/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`gregor_[a-z_]+`).FindAllString(string(dash), -1) {
		base := strings.TrimSuffix(name, "_bucket")
		if strings.HasPrefix(base, "gregor_extension_") || strings.HasPrefix(base, "gregor_mirror_") {
			continue
		}
		if !strings.Contains(string(metrics), "\n"+base) {
			t.Errorf("the dashboard charts %s, which /metrics does not carry", name)
		}
	}

	for _, tc := range []struct {
		path string
		want int
	}{
		{"/api/v1/topics/nope", 404},
		{"/api/v1/topics/orders/partitions/9/records", 404},
		{"/api/v1/topics/orders/partitions/x/records", 400},
		{"/api/v1/topics/orders/partitions/0/records?limit=0", 400},
		{"/api/v1/topics/orders/partitions/0/records?timestamp=yesterday", 400},
		{"/api/v1/groups/nope", 404},
		{"/api/v1/extensions", 200},
		{"/api/v1/mirrors", 200},
		{"/api/v1/openapi.yaml", 200},
		{"/console/", 200},
		{"/console/topics/orders", 200},
	} {
		if s := b.get(t, tc.path, "", "", nil); s != tc.want {
			t.Errorf("GET %s = %d, want %d", tc.path, s, tc.want)
		}
	}
	// Credentials sent to a broker without SASL cannot be checked.
	if s := b.get(t, "/api/v1/cluster", "alice", "pw", nil); s != 401 {
		t.Errorf("credentials without SASL: %d, want 401", s)
	}
}

func TestAdminAPIFollowsACLs(t *testing.T) {
	b := startBroker(t, func(c *config.Config) {
		c.Listeners.Extra = []config.ExtraListener{{Name: "SECURE", Address: "127.0.0.1:0", Protocol: "SASL_PLAINTEXT"}}
		c.Security.SASLMechanisms = []string{"SCRAM-SHA-256"}
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:admin"}
		// Resources without ACLs are open: the bootstrap below runs as
		// User:ANONYMOUS on the PLAINTEXT listener.
		c.Security.AllowEveryoneIfNoACL = true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := b.adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "a-pw"},
		{User: "admin", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "root-pw"},
	})
	if err != nil || res.Error() != nil {
		t.Fatal(err, res.Error())
	}
	for _, n := range []string{"orders", "secret"} {
		if _, err := b.adm.CreateTopic(ctx, 1, 1, nil, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.cl.ProduceSync(ctx, &kgo.Record{Topic: "secret", Key: []byte("k"), Value: []byte("hidden")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	acls := []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("orders").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral),
		kadm.NewACLs().Allow("User:admin").AllowHosts("*").Topics("secret").Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternLiteral),
	}
	for _, a := range acls {
		if created, err := b.adm.CreateACLs(ctx, a); err != nil || created[0].Err != nil {
			t.Fatal(err, created)
		}
	}
	names := func(user, pass string) string {
		var ts []httpapi.TopicSummary
		if s := b.get(t, "/api/v1/topics", user, pass, &ts); s != 200 {
			return fmt.Sprint(s)
		}
		var n []string
		for _, x := range ts {
			n = append(n, x.Name)
		}
		return strings.Join(n, ",")
	}
	// Produce over HTTP is authorized for the authenticated principal.
	post := func(user, pass, topic string) int {
		req, _ := http.NewRequest("POST", b.base+"/topics/"+topic, strings.NewReader(`{"records":[{"key":"k","value":{"x":1}}]}`))
		req.Header.Set("Content-Type", httpapi.ContentTypeJSON)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post("alice", "a-pw", "orders"); s != 403 {
		t.Errorf("alice (READ only) produced over HTTP: %d, want 403", s)
	}
	if s := post("admin", "root-pw", "secret"); s != 200 {
		t.Errorf("admin produced over HTTP: %d, want 200", s)
	}
	if s := post("", "", "secret"); s != 403 {
		t.Errorf("anonymous produced over HTTP: %d, want 403", s)
	}
	for _, tc := range []struct {
		name, user, pass, path string
		want                   int
		topics                 string
	}{
		{"wrong password", "alice", "nope", "/api/v1/topics", 401, "401"},
		{"unknown user", "mallory", "x", "/api/v1/topics", 401, "401"},
		{"alice sees orders only", "alice", "a-pw", "/api/v1/topics/secret", 403, "orders"},
		{"alice reads orders", "alice", "a-pw", "/api/v1/topics/orders/partitions/0/records", 200, "orders"},
		{"alice cannot read secret", "alice", "a-pw", "/api/v1/topics/secret/partitions/0/records", 403, "orders"},
		{"the super user sees all", "admin", "root-pw", "/api/v1/topics/secret/partitions/0/records", 200, "orders,secret"},
		{"anonymous sees neither", "", "", "/api/v1/topics/orders", 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s := b.get(t, tc.path, tc.user, tc.pass, nil); s != tc.want {
				t.Errorf("GET %s = %d, want %d", tc.path, s, tc.want)
			}
			if got := names(tc.user, tc.pass); got != tc.topics {
				t.Errorf("topics = %q, want %q", got, tc.topics)
			}
		})
	}
}

func TestAdminAPIShowsGroupMembers(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []kgo.Opt
		typ  string
	}{
		{"classic", nil, "classic"},
		{"consumer protocol", []kgo.Opt{kgo.ServerSideBalancer()}, "consumer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startBroker(t, func(c *config.Config) {
				c.Groups.GroupInitialRebalanceDelayMs = 0
				c.Groups.GroupConsumerHeartbeatIntervalMs = 200
				c.Groups.OffsetsTopicPartitions = 2
			})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if _, err := b.adm.CreateTopic(ctx, 3, 1, nil, "events"); err != nil {
				t.Fatal(err)
			}
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.srv.KafkaAddr()), kgo.ConsumerGroup("viewers"),
				kgo.ConsumeTopics("events"), kgo.ClientID("member-" + tc.typ)}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			go func() {
				for ctx.Err() == nil && !cl.PollFetches(ctx).IsClientClosed() {
				}
			}()
			var gd httpapi.GroupDetail
			for {
				if b.get(t, "/api/v1/groups/viewers", "", "", &gd) == 200 && len(gd.MemberList) == 1 &&
					len(gd.MemberList[0].Assignment["events"]) == 3 {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("the member and its 3 partitions never showed: %+v", gd)
				case <-time.After(100 * time.Millisecond):
				}
			}
			if gd.Type != tc.typ || gd.Members != 1 || gd.MemberList[0].ClientID != "member-"+tc.typ {
				t.Fatalf("group %+v", gd)
			}
		})
	}
}
