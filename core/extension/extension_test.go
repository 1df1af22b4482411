package extension

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/retention"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// lengthPartitioner places a record by the length of its key; it fails
// when told to.
type lengthPartitioner struct{ fail bool }

func (l *lengthPartitioner) PartitionBatch(records []partitioner.Record, n int32, out []int32) error {
	if l.fail {
		return errors.New("module trapped")
	}
	for i, r := range records {
		out[i] = int32(len(r.Key)) % n
	}
	return nil
}

func testSet(t *testing.T, fallback string, impl partitioner.BatchPartitioner) *Set {
	t.Helper()
	cfg := config.Default()
	cfg.Extensions = map[string]config.Extension{
		"bylength": {Kind: config.KindPartitioner, WASM: "x.wasm", Fallback: fallback},
		"keep":     {Kind: config.KindRetention, Exec: "x"},
	}
	s, err := NewSet(&cfg, map[string]partitioner.BatchPartitioner{"bylength": impl},
		map[string]retention.Policy{"keep": retention.Func(func(context.Context, retention.Partition) (int, error) { return 0, nil })}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func batch(t *testing.T, codec record.Codec, keys ...any) []byte {
	t.Helper()
	recs := make([]record.Record, len(keys))
	for i, k := range keys {
		switch k := k.(type) {
		case string:
			recs[i] = record.Record{Key: []byte(k), Value: []byte("value-" + k), Headers: []record.RecordHeader{{Key: "h", Value: []byte(k)}}}
		case nil:
			recs[i] = record.Record{Value: []byte("no key")}
		}
	}
	b, err := record.Encode(record.BatchSpec{Codec: codec, FirstTimestamp: 1700000000000, ProducerID: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewSetNeedsEveryDeclaredExtension(t *testing.T) {
	cfg := config.Default()
	cfg.Extensions = map[string]config.Extension{"bylength": {Kind: config.KindPartitioner, WASM: "x.wasm"}}
	if _, err := NewSet(&cfg, nil, nil, quiet); err == nil || !strings.Contains(err.Error(), "partitioner bylength is declared but was not opened") {
		t.Fatalf("err = %v", err)
	}
}

func TestTopicPicks(t *testing.T) {
	s := testSet(t, "", &lengthPartitioner{})
	tests := []struct {
		configs map[string]string
		want    string
		err     string
	}{
		{map[string]string{}, "murmur2", ""},
		{map[string]string{ConfigPartitioner: "murmur2"}, "murmur2", ""},
		{map[string]string{ConfigPartitioner: "bylength"}, "bylength", ""},
		{map[string]string{ConfigPartitioner: "keep"}, "", "not a partitioner"},
		{map[string]string{ConfigPartitioner: "gone"}, "", "gregor.partitioner=gone: no such extension"},
	}
	for _, tt := range tests {
		p, err := s.TopicPartitioner(tt.configs)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: err %v, want %q", tt.configs, err, tt.err)
			}
			continue
		}
		if err != nil || p.Name != tt.want {
			t.Errorf("%v: %v %v, want %s", tt.configs, p, err, tt.want)
		}
	}
	name, pol, fb, ok, err := s.TopicRetention(map[string]string{ConfigRetention: "keep"})
	if err != nil || !ok || name != "keep" || pol == nil || fb != config.FallbackBuiltin {
		t.Fatalf("retention: %q %v %q %v %v", name, pol, fb, ok, err)
	}
	if _, _, _, ok, err := s.TopicRetention(map[string]string{}); ok || err != nil {
		t.Fatalf("default retention: %v %v", ok, err)
	}
	if !Enforced(map[string]string{ConfigEnforce: "true"}) || Enforced(map[string]string{ConfigEnforce: "false"}) || Enforced(nil) {
		t.Fatal("Enforced")
	}
}

func TestPlacementCheck(t *testing.T) {
	ok := &lengthPartitioner{}
	failing := &lengthPartitioner{fail: true}
	tests := []struct {
		name      string
		fallback  string
		impl      partitioner.BatchPartitioner
		set       func(t *testing.T) []byte
		partition int32
		target    error
		text      string
	}{
		{"all in place", "", ok, func(t *testing.T) []byte { return batch(t, record.CodecNone, "abc", "def", "ghi") }, 3, nil, ""},
		{"null keys go anywhere", "", ok, func(t *testing.T) []byte { return batch(t, record.CodecNone, nil, "abc", nil) }, 3, nil, ""},
		{"only null keys", "", failing, func(t *testing.T) []byte { return batch(t, record.CodecNone, nil, nil) }, 1, nil, ""},
		{"one misplaced", "", ok, func(t *testing.T) []byte { return batch(t, record.CodecNone, "abc", "ab") }, 3, ErrMisplaced,
			`record 1 (key "ab") belongs in partition 2 by partitioner bylength, not partition 3`},
		{"compressed", "", ok, func(t *testing.T) []byte { return batch(t, record.CodecZstd, "abcd", "a") }, 4, ErrMisplaced,
			`record 1 (key "a") belongs in partition 1 by partitioner bylength, not partition 4`},
		{"two batches", "", ok, func(t *testing.T) []byte {
			return append(batch(t, record.CodecLZ4, "abc"), batch(t, record.CodecNone, nil, "abcdefg")...)
		}, 3, ErrMisplaced, `record 2 (key "abcdefg") belongs in partition 7`},
		{"failing, reject", config.FallbackReject, failing, func(t *testing.T) []byte { return batch(t, record.CodecNone, "abc") }, 3, ErrCheckFailed, "module trapped"},
		{"corrupt batch", "", ok, func(t *testing.T) []byte { b := batch(t, record.CodecNone, "abc"); b[len(b)-1] ^= 0xff; return b }, 3, ErrCheckFailed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSet(t, tt.fallback, tt.impl)
			p, err := s.TopicPartitioner(map[string]string{ConfigPartitioner: "bylength"})
			if err != nil {
				t.Fatal(err)
			}
			var c Placement
			c.MaxDecompressed = 1 << 20
			err = c.Check(p, tt.set(t), tt.partition, 10)
			if tt.target == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tt.target) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v, want %v with %q", err, tt.target, tt.text)
			}
		})
	}
}

func TestPartitionerFallsBackToMurmur2(t *testing.T) {
	s := testSet(t, config.FallbackBuiltin, &lengthPartitioner{fail: true})
	p, _ := s.TopicPartitioner(map[string]string{ConfigPartitioner: "bylength"})
	out := make([]int32, 3)
	keys := []string{"21", "foobar", "abc"}
	recs := make([]partitioner.Record, len(keys))
	for i, k := range keys {
		recs[i] = partitioner.Record{Key: []byte(k)}
	}
	if err := p.PartitionBatch(recs, 8, out); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if want := partitioner.KeyPartition([]byte(k), 8); out[i] != want {
			t.Errorf("%s: %d, want murmur2 %d", k, out[i], want)
		}
	}
	// The placement check agrees with the fallback.
	var c Placement
	c.MaxDecompressed = 1 << 20
	right := partitioner.KeyPartition([]byte("foobar"), 8)
	if err := c.Check(p, batch(t, record.CodecNone, "foobar"), right, 8); err != nil {
		t.Fatal(err)
	}
}

func openLog(t *testing.T, now func() time.Time) *log.Log {
	t.Helper()
	dir, err := log.OpenDir(t.TempDir(), log.Options{Now: now, Logger: quiet}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	cfg := log.DefaultConfig()
	cfg.SegmentBytes = 200 // about one small batch per segment
	l, err := dir.Create("orders", 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := l.Append(batch(t, record.CodecNone, "k1", "k2")); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func TestApplyPolicy(t *testing.T) {
	now := time.Unix(1700000000, 0)
	clock := func() time.Time { return now }
	type call struct {
		groups []string
	}
	tests := []struct {
		name        string
		policy      retention.Policy
		hw          int64
		wantDeleted int
		wantStart   int64
		err         string
	}{
		{"keep all", retention.Func(func(context.Context, retention.Partition) (int, error) { return 0, nil }), 10, 0, 0, ""},
		{"two go", retention.Func(func(context.Context, retention.Partition) (int, error) { return 2, nil }), 10, 2, 4, ""},
		{"bounded by the high watermark", retention.Func(func(context.Context, retention.Partition) (int, error) { return 4, nil }), 5, 2, 4, ""},
		{"out of range", retention.Func(func(_ context.Context, p retention.Partition) (int, error) { return len(p.Segments), nil }), 10, 0, 0, "out of range"},
		{"policy error", retention.Func(func(context.Context, retention.Partition) (int, error) { return 0, errors.New("boom") }), 10, 0, 0, "boom"},
		{"consumed by the group", groupPolicy{groups: []string{"billing"}}, 10, 3, 6, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openLog(t, clock)
			if segs := l.Segments(); len(segs) != 5 {
				t.Fatalf("%d segments, want 5", len(segs))
			}
			var asked []call
			offsets := func(groups []string, topic string, partition int32) ([]retention.GroupOffset, error) {
				asked = append(asked, call{groups})
				return []retention.GroupOffset{{Group: "billing", Offset: 7}}, nil
			}
			n, err := ApplyPolicy(context.Background(), tt.policy, l, tt.hw, offsets, now.UnixMilli())
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				if l.LogStartOffset() != 0 {
					t.Fatal("a failed round deleted data")
				}
				return
			}
			if err != nil || n != tt.wantDeleted || l.LogStartOffset() != tt.wantStart {
				t.Fatalf("deleted %d (start %d), err %v; want %d (start %d)", n, l.LogStartOffset(), err, tt.wantDeleted, tt.wantStart)
			}
			if gp, ok := tt.policy.(groupPolicy); ok && (len(asked) != 1 || strings.Join(asked[0].groups, ",") != strings.Join(gp.groups, ",")) {
				t.Fatalf("offsets asked for %v", asked)
			}
		})
	}
}

// groupPolicy deletes what every group it names has consumed.
type groupPolicy struct{ groups []string }

func (g groupPolicy) Groups() []string { return g.groups }

func (g groupPolicy) DeletableSegments(_ context.Context, p retention.Partition) (int, error) {
	return retention.ConsumedByAll(p), nil
}
