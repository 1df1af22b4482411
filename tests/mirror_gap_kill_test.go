package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/mirror"
)

// TestMirrorSourceGapAfterKill is TestMirrorSourceGap with the mirror
// SIGKILLed instead of stopped: its last offset sync may lag what reached
// the target, and the records the source deleted before it restarted must
// still be reported as a gap, never skipped silently.
func TestMirrorSourceGapAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	for _, tt := range []struct{ mode, onGap string }{
		{mirror.ModeCopy, mirror.GapSkip}, {mirror.ModeLink, mirror.GapSkip},
		{mirror.ModeCopy, mirror.GapStop}, {mirror.ModeLink, mirror.GapStop},
	} {
		mode := tt.mode
		t.Run(mode+"-"+tt.onGap, func(t *testing.T) {
			east := startBroker(t, fastLog)
			west := startBroker(t, fastLog)
			createTopic(t, east.Addr, "orders", 1, nil)
			produceMirrorRecords(t, east.Addr, "orders", 0, 100)
			path, _ := mirrorConfig(t, east.Addr, west.Addr, mode, "")
			setMirrorOption(t, path, fmt.Sprintf("on_source_gap = %q", tt.onGap))
			m := startChildMirror(t, path)
			waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: 100}, 30*time.Second)
			m.kill()

			produceMirrorRecords(t, east.Addr, "orders", 100, 100)
			deleteBefore(t, east.Addr, "orders", 0, 150)
			m = startChildMirror(t, path)
			end := int64(150)
			if mode == mirror.ModeLink {
				end = 200
			}
			if tt.onGap == mirror.GapStop {
				eventually(t, 30*time.Second, "the partition stops at the gap", func() error {
					if out := m.logs.String(); !strings.Contains(out, "partition stopped") ||
						!strings.Contains(out, "to 149 (") {
						return fmt.Errorf("target ends %v; mirror output:\n%s", tryEndOffsets(west.Addr, "east.orders"), out)
					}
					return nil
				})
				if ends := endOffsets(t, west.Addr, "east.orders"); ends[0] != 100 {
					t.Fatalf("target end = %d after a stopped gap, want 100", ends[0])
				}
				return
			}
			waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: end}, 30*time.Second)
			eventually(t, 10*time.Second, "the gap is reported", func() error {
				// Killed, the mirror may not have synced where offsets
				// below 100 went: the gap may start below 100.
				if gaps := reportedGaps(m.logs.String(), "orders"); len(gaps[0]) != 1 || gaps[0][0].From > 100 || gaps[0][0].To != 149 {
					return fmt.Errorf("reported gaps %v; mirror output:\n%s", gaps, m.logs.String())
				}
				return nil
			})
		})
	}
}

// setMirrorOption appends a line to the [mirror] section of a mirror.toml
// written by mirrorConfig (the last section).
func setMirrorOption(t *testing.T, path, line string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "[mirror]") {
		t.Fatalf("%s has no [mirror] section", path)
	}
	if err := os.WriteFile(path, []byte(string(b)+line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
