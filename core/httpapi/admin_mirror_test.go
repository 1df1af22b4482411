package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/httpapi"
)

// TestMirrorLinksOfARunningMirror runs two brokers: "east" holds the topic
// "orders"; the other's [mirror.self] section mirrors it into
// "east.orders" on itself. /api/v1/mirrors must show the link catching up.
// (A broker cannot mirror into itself: heartbeat topics are always
// mirrored, so each would be mirrored again under a longer prefix.)
func TestMirrorLinksOfARunningMirror(t *testing.T) {
	for _, mode := range []string{"copy", "link"} {
		t.Run(mode, func(t *testing.T) {
			east := startBroker(t, nil)
			b := startBroker(t, func(c *config.Config) {
				c.Mirrors = map[string]config.MirrorTable{"self": {
					"source": map[string]any{"name": "east", "bootstrap": []any{east.srv.KafkaAddr()}},
					"target": map[string]any{"name": "west"},
					"topics": map[string]any{"include": []any{"orders"}, "rename": "prefix"},
					"mirror": map[string]any{"mode": mode, "refresh_interval_ms": int64(50),
						"checkpoint_interval_ms": int64(1000), "heartbeat_interval_ms": int64(0)},
				}}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := east.adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 10; i++ {
				r := &kgo.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))}
				if err := east.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			// Poll the API until the mirror has caught up; each answer is
			// checked for shape on the way.
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			var last httpapi.MirrorLink
			for {
				var got struct {
					Enabled bool                 `json:"enabled"`
					Links   []httpapi.MirrorLink `json:"links"`
				}
				if s := b.get(t, "/api/v1/mirrors", "", "", &got); s != 200 || !got.Enabled || len(got.Links) != 1 {
					t.Fatalf("mirrors: %d %+v", s, got)
				}
				last = got.Links[0]
				if last.Name != "self" || last.Source != "east" {
					t.Fatalf("link %+v", last)
				}
				var records int64
				for _, p := range last.PartitionLags {
					records += p.LagRecords
				}
				if records != last.LagRecords {
					t.Fatalf("link lag %d, partitions sum to %d: %+v", last.LagRecords, records, last)
				}
				// Lag 0 can be reported before the first fetch saw the
				// records, so catching up also means the target holds them.
				if last.State == "running" && len(last.PartitionLags) == 2 && last.LagRecords == 0 &&
					len(last.Topics) == 1 && last.Topics[0] == "orders" && targetRecords(ctx, b.adm, "east.orders") == 10 {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("mirror did not catch up; last answer %+v", last)
				case <-tick.C:
				}
			}
			if last.RecordAgeMs < 0 {
				t.Fatalf("record age %d", last.RecordAgeMs)
			}
			if total := targetRecords(ctx, b.adm, "east.orders"); total != 10 {
				t.Fatalf("east.orders holds %d records, want 10", total)
			}
		})
	}
}

// TestMirrorLinksWithoutAMirror: a broker without [mirror.NAME] sections
// answers an empty list and says the mirror is off.
func TestMirrorLinksWithoutAMirror(t *testing.T) {
	b := startBroker(t, nil)
	var got struct {
		Enabled bool              `json:"enabled"`
		Links   []json.RawMessage `json:"links"`
	}
	if s := b.get(t, "/api/v1/mirrors", "", "", &got); s != 200 || got.Enabled || got.Links == nil || len(got.Links) != 0 {
		t.Fatalf("mirrors: %d %+v", s, got)
	}
}

// targetRecords is the sum of a topic's end offsets, -1 on error.
func targetRecords(ctx context.Context, adm *kadm.Client, topic string) int64 {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return -1
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	return total
}
