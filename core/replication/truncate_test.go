package replication

import "testing"

func TestTruncationFor(t *testing.T) {
	// The follower's log: epoch 1 from 0, epoch 3 from 10, ending at 20.
	local := func(e int32) (int32, int64) {
		switch {
		case e < 0 || e > 3:
			return -1, -1
		case e == 3:
			return 3, 20
		case e >= 1:
			return 1, 10
		}
		return e, 0
	}
	tests := []struct {
		name        string
		epoch       int32
		end         int64
		want        int64
		wantDone    bool
		leo, hwater int64
	}{
		{"leader knows no end: the high watermark", 3, -1, 8, true, 20, 8},
		{"leader knows no epoch: its end", -1, 15, 15, true, 20, 8},
		{"same epoch, leader ends first", 3, 14, 14, true, 20, 8},
		{"same epoch, follower ends first", 1, 12, 10, true, 20, 8},
		{"epoch unknown here: intermediate cut, ask again", 2, 12, 10, false, 20, 8},
		{"epoch above all known here: leader's end", 5, 17, 17, true, 20, 8},
		{"never past the log end", 3, 30, 20, true, 20, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := truncationFor(tt.epoch, tt.end, local, tt.leo, tt.hwater)
			if got.offset != tt.want || got.complete != tt.wantDone {
				t.Fatalf("got %+v, want offset %d complete %v", got, tt.want, tt.wantDone)
			}
		})
	}
}
