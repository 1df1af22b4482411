package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gregorbroker/gregor/core/config"
)

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

func testConfig(t *testing.T, dir string) Config {
	t.Helper()
	return Config{
		NodeID: 1,
		Dir:    dir,
		Broker: config.Default(),
		Logger: quietLogger,
		Now:    func() time.Time { return time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
}

// openReady opens a controller and waits until it is the active controller.
func openReady(t *testing.T, cfg Config) *Controller {
	t.Helper()
	c, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitLeader(ctx); err != nil {
		t.Fatalf("WaitLeader: %v", err)
	}
	return c
}

// newCluster opens a ready controller with brokers 1..n registered.
func newCluster(t *testing.T, n int) *Controller {
	t.Helper()
	c := openReady(t, testConfig(t, t.TempDir()))
	for id := int32(1); id <= int32(n); id++ {
		if err := c.RegisterBroker(context.Background(), Broker{NodeID: id, Host: "localhost", Port: 9090 + id}); err != nil {
			t.Fatalf("RegisterBroker(%d): %v", id, err)
		}
	}
	return c
}

func mustCreate(t *testing.T, c *Controller, reqs ...CreateTopic) []TopicResult {
	t.Helper()
	res := c.CreateTopics(context.Background(), reqs, false)
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("CreateTopics(%s): %v", r.Name, r.Err)
		}
	}
	return res
}

func TestOpenElectsAndBootstraps(t *testing.T) {
	start := time.Now()
	c := openReady(t, testConfig(t, t.TempDir()))
	elapsed := time.Since(start)
	t.Logf("leader after %v", elapsed)
	if elapsed > 3*time.Second {
		t.Errorf("single-voter election took %v", elapsed)
	}
	im := c.Image()
	if im.ControllerID != 1 {
		t.Errorf("ControllerID = %d, want 1", im.ControllerID)
	}
	if im.ClusterID == "" || im.Offset == 0 {
		t.Errorf("ClusterID %q, Offset %d", im.ClusterID, im.Offset)
	}
	if len(im.Topics) != 0 || len(im.Brokers) != 0 {
		t.Errorf("fresh image has topics or brokers: %+v", im)
	}
}

func TestRegisterBroker(t *testing.T) {
	c := newCluster(t, 0)
	ctx := context.Background()
	tests := []struct {
		name    string
		b       Broker
		wantErr error
	}{
		{"ok", Broker{NodeID: 1, Host: "h1", Port: 9092, Rack: "r1", Epoch: 99}, nil},
		{"negative id", Broker{NodeID: -1, Host: "h", Port: 1}, ErrInvalidRequest},
		{"no host", Broker{NodeID: 2, Port: 1}, ErrInvalidRequest},
		{"port zero", Broker{NodeID: 2, Host: "h", Port: 0}, ErrInvalidRequest},
		{"port too big", Broker{NodeID: 2, Host: "h", Port: 70000}, ErrInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.RegisterBroker(ctx, tc.b)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
	b, ok := c.Image().Broker(1)
	if !ok || b.Host != "h1" || b.Rack != "r1" || b.Epoch == 99 || b.Epoch <= 0 {
		t.Fatalf("broker 1 = %+v, %v (epoch must be the record's raft index)", b, ok)
	}
	// Re-registration replaces the address and bumps the epoch.
	if err := c.RegisterBroker(ctx, Broker{NodeID: 1, Host: "h1b", Port: 9093}); err != nil {
		t.Fatal(err)
	}
	b2, _ := c.Image().Broker(1)
	if b2.Host != "h1b" || b2.Epoch <= b.Epoch {
		t.Fatalf("re-registered broker = %+v, previous epoch %d", b2, b.Epoch)
	}
}

func TestAllocateProducerIDs(t *testing.T) {
	dir := t.TempDir()
	c := openReady(t, testConfig(t, dir))
	ctx := context.Background()
	for i, want := range []int64{0, 1000, 2000} {
		got, err := c.AllocateProducerIDs(ctx, 1000)
		if err != nil || got != want {
			t.Fatalf("block %d: first = %d, %v; want %d", i, got, err, want)
		}
	}
	for _, n := range []int32{0, -1, maxProducerIDBlock + 1} {
		if _, err := c.AllocateProducerIDs(ctx, n); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("count %d: err = %v, want ErrInvalidRequest", n, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2 := openReady(t, testConfig(t, dir))
	if got, err := c2.AllocateProducerIDs(ctx, 5); err != nil || got != 3000 {
		t.Fatalf("after restart first = %d, %v; want 3000", got, err)
	}
}

// sameMetadata compares everything but offsets and the cluster id.
func sameMetadata(t *testing.T, a, b *Image) {
	t.Helper()
	if !reflect.DeepEqual(a.Topics, b.Topics) {
		t.Errorf("topics differ:\n%+v\n%+v", a.Topics, b.Topics)
	}
	if !reflect.DeepEqual(a.TopicsByID, b.TopicsByID) {
		t.Errorf("topics by id differ")
	}
	if !reflect.DeepEqual(a.Configs, b.Configs) {
		t.Errorf("configs differ:\n%v\n%v", a.Configs, b.Configs)
	}
	if !reflect.DeepEqual(a.Brokers, b.Brokers) {
		t.Errorf("brokers differ:\n%v\n%v", a.Brokers, b.Brokers)
	}
	if a.NextProducerID != b.NextProducerID {
		t.Errorf("next producer id %d vs %d", a.NextProducerID, b.NextProducerID)
	}
}

// populate makes a varied image: brokers, topics, configs, a deletion,
// added partitions and producer ids.
func populate(t *testing.T, c *Controller, prefix string) {
	t.Helper()
	ctx := context.Background()
	for id := int32(1); id <= 3; id++ {
		if err := c.RegisterBroker(ctx, Broker{NodeID: id, Host: "h", Port: 9000 + id}); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(t, c,
		CreateTopic{Name: prefix + "a", NumPartitions: 3, ReplicationFactor: 2, Configs: map[string]string{"retention.ms": "1000"}},
		CreateTopic{Name: prefix + "b", NumPartitions: -1, ReplicationFactor: -1},
		CreateTopic{Name: prefix + "gone", NumPartitions: 1, ReplicationFactor: 1},
	)
	if res := c.DeleteTopics(ctx, []string{prefix + "gone"}, nil); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if res := c.CreatePartitions(ctx, []CreatePartitions{{Topic: prefix + "b", Count: 4}}, false); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	v := "compact"
	if res := c.AlterConfigs(ctx, []AlterConfig{{Resource: ConfigResource{ResourceTopic, prefix + "b"},
		Ops: []ConfigOp{{Name: "cleanup.policy", Value: &v, Op: OpSet}}}}, false); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if _, err := c.AllocateProducerIDs(ctx, 1000); err != nil {
		t.Fatal(err)
	}
}

func TestRestartFromLog(t *testing.T) {
	dir := t.TempDir()
	c := openReady(t, testConfig(t, dir))
	populate(t, c, "")
	before := c.Image()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2 := openReady(t, testConfig(t, dir))
	after := c2.Image()
	sameMetadata(t, before, after)
	if after.ClusterID != before.ClusterID {
		t.Errorf("cluster id changed: %q -> %q", before.ClusterID, after.ClusterID)
	}
	if after.Offset <= before.Offset {
		t.Errorf("offset %d after restart, %d before (a new controller record must follow)", after.Offset, before.Offset)
	}
}

func TestSnapshotAndRestore(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Tune = func(rc *raft.Config) { rc.TrailingLogs = 0 }
	c := openReady(t, cfg)
	populate(t, c, "s")
	if err := c.raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	first, err := c.store.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	if first == 1 {
		t.Fatalf("log not compacted: first index %d", first)
	}
	// Changes after the snapshot replay from the log on top of it.
	populate(t, c, "t")
	before := c.Image()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	c2 := openReady(t, cfg)
	sameMetadata(t, before, c2.Image())
	if _, ok := c2.Image().Topic("sa"); !ok {
		t.Fatal("topic from the snapshot is missing")
	}
	if _, ok := c2.Image().Topic("tb"); !ok {
		t.Fatal("topic from the log after the snapshot is missing")
	}
}

func TestSubscribe(t *testing.T) {
	c := newCluster(t, 1)
	ch, cancel := c.Subscribe()
	first := <-ch
	if first != c.Image() {
		t.Fatal("Subscribe did not deliver the current image first")
	}
	// Several changes without reading: the channel holds only the latest.
	for i := 0; i < 5; i++ {
		mustCreate(t, c, CreateTopic{Name: fmt.Sprintf("t%d", i), NumPartitions: 1, ReplicationFactor: 1})
	}
	got := <-ch
	if got != c.Image() {
		t.Fatalf("got image at offset %d, latest is %d", got.Offset, c.Image().Offset)
	}
	if _, ok := got.Topic("t4"); !ok {
		t.Fatal("latest image lacks t4")
	}
	select {
	case im := <-ch:
		t.Fatalf("unexpected extra image at offset %d", im.Offset)
	default:
	}
	cancel()
	if _, open := <-ch; open {
		t.Fatal("channel still open after cancel")
	}
	cancel() // idempotent

	ch2, _ := c.Subscribe()
	<-ch2
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for range ch2 {
	}
	// Subscribing after Close yields the last image and a closed channel.
	ch3, cancel3 := c.Subscribe()
	if im := <-ch3; im == nil {
		t.Fatal("no image after close")
	}
	if _, open := <-ch3; open {
		t.Fatal("channel open after Close")
	}
	cancel3()
}

func TestNotController(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	// A heartbeat timeout far beyond the test keeps the node a follower.
	cfg.Tune = func(rc *raft.Config) {
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = time.Hour, time.Hour, time.Hour
	}
	c, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if res := c.CreateTopics(ctx, []CreateTopic{{Name: "x", NumPartitions: 1, ReplicationFactor: 1}}, false); !errors.Is(res[0].Err, ErrNotController) {
		t.Errorf("CreateTopics: %v", res[0].Err)
	}
	if err := c.RegisterBroker(ctx, Broker{NodeID: 1, Host: "h", Port: 1}); !errors.Is(err, ErrNotController) {
		t.Errorf("RegisterBroker: %v", err)
	}
	if _, err := c.AllocateProducerIDs(ctx, 1); !errors.Is(err, ErrNotController) {
		t.Errorf("AllocateProducerIDs: %v", err)
	}
	if res := c.AlterConfigs(ctx, []AlterConfig{{Resource: ConfigResource{ResourceBroker, ""}}}, false); !errors.Is(res[0].Err, ErrNotController) {
		t.Errorf("AlterConfigs: %v", res[0].Err)
	}
	wctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.WaitLeader(wctx); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitLeader: %v", err)
	}
	if c.Image() == nil || c.Image().ControllerID != -1 {
		t.Errorf("image before election: %+v", c.Image())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if res := c.DeleteTopics(ctx, []string{"x"}, nil); !errors.Is(res[0].Err, ErrNotController) {
		t.Errorf("DeleteTopics after Close: %v", res[0].Err)
	}
	if err := c.WaitLeader(ctx); !errors.Is(err, ErrNotController) {
		t.Errorf("WaitLeader after Close: %v", err)
	}
}

func TestConcurrentProposals(t *testing.T) {
	c := newCluster(t, 1)
	ctx := context.Background()
	const workers = 8
	var wg sync.WaitGroup
	sameName := make([]error, workers)
	blocks := make([]int64, workers)
	blockErrs := make([]error, workers)
	distinct := make([]error, workers)
	for i := 0; i < workers; i++ {
		wg.Add(3)
		go func() {
			defer wg.Done()
			sameName[i] = c.CreateTopics(ctx, []CreateTopic{{Name: "contested", NumPartitions: 2, ReplicationFactor: 1}}, false)[0].Err
		}()
		go func() {
			defer wg.Done()
			blocks[i], blockErrs[i] = c.AllocateProducerIDs(ctx, 10)
		}()
		go func() {
			defer wg.Done()
			distinct[i] = c.CreateTopics(ctx, []CreateTopic{{Name: fmt.Sprintf("own-%d", i), NumPartitions: 1, ReplicationFactor: 1}}, false)[0].Err
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range sameName {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, ErrTopicExists):
			t.Errorf("contested create: %v", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d creators of the same topic succeeded, want 1", wins)
	}
	seen := map[int64]bool{}
	for i, first := range blocks {
		if blockErrs[i] != nil {
			t.Fatalf("AllocateProducerIDs: %v", blockErrs[i])
		}
		if first%10 != 0 || seen[first] || first >= 10*workers {
			t.Errorf("block at %d overlaps or is out of range", first)
		}
		seen[first] = true
	}
	for i, err := range distinct {
		if err != nil {
			t.Errorf("own-%d: %v", i, err)
		}
	}
	im := c.Image()
	if len(im.Topics) != workers+1 || im.NextProducerID != 10*workers {
		t.Errorf("image has %d topics and next producer id %d", len(im.Topics), im.NextProducerID)
	}
}

func TestTCPTransportRestartOnNewPort(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		trans, err := NewTCPTransport("127.0.0.1:0", "", quietLogger)
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(t, dir)
		cfg.Transport = trans
		c := openReady(t, cfg)
		if round == 0 {
			mustCreate(t, newClusterOn(t, c), CreateTopic{Name: "kept", NumPartitions: 1, ReplicationFactor: 1})
		} else if _, ok := c.Image().Topic("kept"); !ok {
			t.Fatal("topic lost across a restart on a new port")
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewTCPTransport("0.0.0.0:0", "", quietLogger); err == nil {
		t.Error("a wildcard bind without an advertised address was accepted")
	}
}

// newClusterOn registers broker 1 on an open controller.
func newClusterOn(t *testing.T, c *Controller) *Controller {
	t.Helper()
	if err := c.RegisterBroker(context.Background(), Broker{NodeID: 1, Host: "localhost", Port: 9092}); err != nil {
		t.Fatal(err)
	}
	return c
}
