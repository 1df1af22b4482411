package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/mirror"
)

// TestMirrorSyncDeletions deletes a mirrored source topic. With
// topics.sync_deletions the target topic the mirror created goes too; by
// default it stays. Either way the other topics keep flowing, and a topic
// created after the deletion shows that discovery ran since.
func TestMirrorSyncDeletions(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	for _, tt := range []struct {
		mode    string
		sync    bool
		deleted bool
	}{
		{mirror.ModeCopy, false, false},
		{mirror.ModeCopy, true, true},
		{mirror.ModeLink, true, true},
	} {
		t.Run(fmt.Sprintf("%s-sync_deletions=%v", tt.mode, tt.sync), func(t *testing.T) {
			east := startBroker(t, fastLog)
			west := startBroker(t, fastLog)
			createTopic(t, east.Addr, "orders.a", 2, nil)
			createTopic(t, east.Addr, "orders.b", 1, nil)
			produceMirrorRecords(t, east.Addr, "orders.a", 0, 50)
			produceMirrorRecords(t, east.Addr, "orders.b", 0, 50)
			section := fmt.Sprintf("include = [\"orders.*\"]\nrename = \"prefix\"\nsync_deletions = %v\n", tt.sync)
			_, cfg := mirrorConfig(t, east.Addr, west.Addr, tt.mode, section)
			m := startMirror(t, cfg)
			for _, topic := range []string{"orders.a", "orders.b"} {
				waitMirrored(t, west.Addr, "east."+topic, endOffsets(t, east.Addr, topic), 30*time.Second)
			}

			adm := newAdmin(t, east.Addr)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := adm.DeleteTopic(ctx, "orders.a"); err != nil {
				t.Fatal(err)
			}
			createTopic(t, east.Addr, "orders.c", 1, nil)
			produceMirrorRecords(t, east.Addr, "orders.c", 0, 10)
			produceMirrorRecords(t, east.Addr, "orders.b", 50, 10)
			waitMirrored(t, west.Addr, "east.orders.c", endOffsets(t, east.Addr, "orders.c"), 30*time.Second)
			waitMirrored(t, west.Addr, "east.orders.b", endOffsets(t, east.Addr, "orders.b"), 30*time.Second)

			wadm := newAdmin(t, west.Addr)
			if tt.deleted {
				eventually(t, 30*time.Second, "the target topic is deleted", func() error {
					td, err := wadm.ListTopics(ctx, "east.orders.a")
					if err != nil {
						return err
					}
					if td["east.orders.a"].Err == nil {
						return fmt.Errorf("east.orders.a still exists")
					}
					return nil
				})
				for p := int32(0); p < 2; p++ {
					if ps, _ := partitionStatus(m, "orders.a", p); ps.State != mirror.StateDeleted {
						t.Fatalf("partition %d state %q, want %q", p, ps.State, mirror.StateDeleted)
					}
				}
				return
			}
			// Discovery ran after the deletion (orders.c arrived), and the
			// copy stayed.
			td, err := wadm.ListTopics(ctx, "east.orders.a")
			if err != nil || td["east.orders.a"].Err != nil {
				t.Fatalf("east.orders.a after the source's deletion: %v %v", err, td["east.orders.a"].Err)
			}
		})
	}
}
