package retention

import (
	"errors"
	"testing"
)

func segs(bounds ...int64) []Segment {
	var s []Segment
	for i := 0; i+1 < len(bounds); i++ {
		s = append(s, Segment{BaseOffset: bounds[i], NextOffset: bounds[i+1], SizeBytes: 100, LargestTimestampMs: -1})
	}
	return s
}

func TestConsumedByAll(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups []GroupOffset
		want   int
	}{
		{"no groups", nil, 0},
		{"one group past two", []GroupOffset{{"a", 20}}, 2},
		{"slowest group wins", []GroupOffset{{"a", 30}, {"b", 15}}, 1},
		{"group without commit", []GroupOffset{{"a", 30}, {"b", -1}}, 0},
		{"everything read: active stays", []GroupOffset{{"a", 1000}}, 3},
		{"inside the first", []GroupOffset{{"a", 9}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Partition{Topic: "t", Segments: segs(0, 10, 20, 30, 40), Groups: tc.groups}
			got := ConsumedByAll(p)
			if got != tc.want {
				t.Fatalf("ConsumedByAll = %d, want %d", got, tc.want)
			}
			if err := Check(p, got); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	p := Partition{Topic: "t", Segments: segs(0, 10, 20)}
	for _, tc := range []struct {
		n  int
		ok bool
	}{{-1, false}, {0, true}, {1, true}, {2, false}} {
		err := Check(p, tc.n)
		if (err == nil) != tc.ok {
			t.Errorf("Check(%d) = %v", tc.n, err)
		}
		if err != nil && !errors.Is(err, ErrOutOfRange) {
			t.Errorf("Check(%d) = %v, want ErrOutOfRange", tc.n, err)
		}
	}
	if err := Check(Partition{}, 0); err != nil {
		t.Errorf("empty partition: %v", err)
	}
}
