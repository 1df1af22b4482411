package api

import "testing"

// TestEndOffsetForEpoch covers the leader epoch lookups a single broker cannot
// reach through the wire (it never changes leader): a leader in a newer epoch
// than its log has seen, and requests for epochs between the two.
func TestEndOffsetForEpoch(t *testing.T) {
	// The log knows epoch 1 from offset 0 and epoch 3 from offset 10; it
	// ends at 15. Its own lookup follows Kafka's leader epoch cache.
	log := func(e int32) (int32, int64) {
		switch {
		case e < 0:
			return -1, -1
		case e == 3:
			return 3, 15
		case e > 3:
			return -1, -1
		case e >= 1:
			return 1, 10
		}
		return e, 0
	}
	tests := []struct {
		name               string
		requested, current int32
		hasLatest          bool
		wantEpoch          int32
		wantEnd            int64
	}{
		{"undefined", -1, 5, true, -1, -1},
		{"above the current epoch", 6, 5, true, -1, -1},
		{"current epoch, no batch in it yet", 5, 5, true, 5, 15},
		{"between the log's latest and current", 4, 5, true, 3, 15},
		{"the log's latest epoch", 3, 5, true, 3, 15},
		{"an older epoch with batches", 2, 5, true, 1, 10},
		{"before the first known epoch", 0, 5, true, 0, 0},
		{"current epoch, the log's latest", 3, 3, true, 3, 15},
		{"empty log, current epoch", 2, 2, false, 2, 15},
		{"empty log, older epoch", 1, 2, false, 1, 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			latest := int32(3)
			if !tt.hasLatest {
				latest = -1
			}
			e, end := endOffsetForEpoch(tt.requested, tt.current, 15, latest, tt.hasLatest, log)
			if e != tt.wantEpoch || end != tt.wantEnd {
				t.Errorf("got epoch %d ending at %d, want epoch %d ending at %d", e, end, tt.wantEpoch, tt.wantEnd)
			}
		})
	}
}
