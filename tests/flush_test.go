package tests

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/server"
)

// segmentSyncFS counts fsyncs of the segment files of one partition
// directory.
type segmentSyncFS struct {
	vfs.FS
	dir   string // a path element, "topic-partition"
	syncs atomic.Int64
}

type segmentSyncFile struct {
	vfs.File
	fs *segmentSyncFS
}

func (c *segmentSyncFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".log") || !strings.Contains(name, "/"+c.dir+"/") {
		return f, err
	}
	return &segmentSyncFile{File: f, fs: c}, nil
}

func (f *segmentSyncFile) Sync() error {
	f.fs.syncs.Add(1)
	return f.File.Sync()
}

// TestFlushMessagesFsyncsProduce sets flush.messages=1 on a topic of a
// page_cache broker with IncrementalAlterConfigs and checks that from then
// on every acks=1 produce was fsynced before it was answered, while before
// the change none was.
func TestFlushMessagesFsyncsProduce(t *testing.T) {
	fsys := &segmentSyncFS{FS: vfs.Default, dir: "flushed-0"}
	addr := startFlushBroker(t, fsys, nil)

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.DefaultProduceTopic("flushed"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tctx, tcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer tcancel()
	if _, err := adm.CreateTopic(tctx, 1, 1, nil, "flushed"); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	produce := func() {
		t.Helper()
		if err := cl.ProduceSync(tctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	for range 3 {
		produce()
	}
	if n := fsys.syncs.Load(); n != 0 {
		t.Fatalf("%d segment fsyncs with flush.messages unset", n)
	}

	one := "1"
	resps, err := adm.AlterTopicConfigs(tctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "flush.messages", Value: &one}}, "flushed")
	if err == nil {
		err = resps[0].Err
	}
	if err != nil {
		t.Fatalf("AlterTopicConfigs: %v", err)
	}
	// The change reaches the partition asynchronously: produce until an
	// answer arrives after an fsync.
	deadline := time.Now().Add(20 * time.Second)
	for before := fsys.syncs.Load(); ; {
		produce()
		if fsys.syncs.Load() > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("flush.messages=1 never made a produce fsync")
		}
	}
	for i := range 5 {
		before := fsys.syncs.Load()
		produce()
		if fsys.syncs.Load() == before {
			t.Fatalf("produce %d under flush.messages=1 was answered before an fsync", i)
		}
	}
}

// startFlushBroker starts a page_cache broker whose logs live on fsys.
func startFlushBroker(t *testing.T, fsys vfs.FS, modify func(*config.Config)) string {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = ""
	cfg.Log.Durability = config.DurabilityPageCache
	if modify != nil {
		modify(&cfg)
	}
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	srv, err := server.New(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})), LogFS: fsys})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("broker Run returned %v at shutdown", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("broker did not stop within 30s of cancellation")
		}
	})
	addr := srv.KafkaAddr()
	waitForBroker(t, addr, done)
	return addr
}

// TestFlushMsSchedulerFsyncs sets flush.ms on a topic and checks that the
// broker's flush scheduler fsyncs data an acks=1 produce left unflushed.
func TestFlushMsSchedulerFsyncs(t *testing.T) {
	fsys := &segmentSyncFS{FS: vfs.Default, dir: "timed-0"}
	addr := startFlushBroker(t, fsys, func(c *config.Config) { c.Log.FlushSchedulerIntervalMs = 10 })
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.DefaultProduceTopic("timed"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"flush.ms": kadm.StringPtr("20")}, "timed"); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for fsys.syncs.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("flush.ms=20 never fsynced the produced data")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition with a deadline
	}
}

// TestRolledSegmentsAdvanceCheckpointedRecoveryPoint: on a page_cache broker
// nothing asks for an fsync, yet the segments a log rolled reach the disk and
// the recovery point written to the data dir follows them (Kafka flushes
// after each roll), so that recovery after kill -9 verifies only the active
// segment instead of everything written since the broker started.
func TestRolledSegmentsAdvanceCheckpointedRecoveryPoint(t *testing.T) {
	dataDir := ""
	addr := startFlushBroker(t, vfs.Default, func(c *config.Config) {
		c.Log.FlushSchedulerIntervalMs = 10
		c.Log.FlushOffsetCheckpointIntervalMs = 20
		dataDir = c.DataDir
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.DefaultProduceTopic("rolled"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"segment.bytes": kadm.StringPtr("1024")}, "rolled"); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	for range 40 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 200)}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		rp := checkpointedOffset(t, filepath.Join(dataDir, "recovery-point-offset-checkpoint"), "rolled", 0)
		if rp >= 30 { // 40 records of ~270 bytes in 1 KiB segments: the active one holds at most 4
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpointed recovery point of rolled-0 is %d after 40 appends in 1 KiB segments, want >= 30", rp)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition with a deadline
	}
}

// checkpointedOffset reads a partition's entry of a Kafka offsets checkpoint
// file ("0", a count, then "<topic> <partition> <offset>" lines); -1 when the
// file or the entry is missing.
func checkpointedOffset(t *testing.T, path, topic string, partition int) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == topic && f[1] == strconv.Itoa(partition) {
			off, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, l, err)
			}
			return off
		}
	}
	return -1
}
