package main

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

func TestParsePartitionSpec(t *testing.T) {
	for _, tc := range []struct {
		in      string
		topic   string
		parts   []int32
		wantErr string
	}{
		{"orders", "orders", nil, ""},
		{"orders:0", "orders", []int32{0}, ""},
		{"orders:0, 2,5", "orders", []int32{0, 2, 5}, ""},
		{":1", "", nil, "empty topic name"},
		{"orders:x", "", nil, `"x" is not a partition number`},
		{"orders:-1", "", nil, "is not a partition number"},
		{"orders:", "", nil, "is not a partition number"},
	} {
		got, err := parsePartitionSpec(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.topic != tc.topic || len(got.partitions) != len(tc.parts) {
			t.Errorf("%q = %+v, %v", tc.in, got, err)
			continue
		}
		for i := range tc.parts {
			if got.partitions[i] != tc.parts[i] {
				t.Errorf("%q = %+v", tc.in, got)
			}
		}
	}
}

func TestParseDatetime(t *testing.T) {
	want := time.Date(2026, 1, 31, 15, 4, 5, 0, time.UTC).UnixMilli()
	for _, in := range []string{"2026-01-31T15:04:05Z", "2026-01-31T15:04:05", "2026-01-31T16:04:05+01:00"} {
		if got, err := parseDatetime(in); err != nil || got != want {
			t.Errorf("%q = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseDatetime("yesterday"); err == nil {
		t.Error("yesterday parsed")
	}
}

func TestResetOffset(t *testing.T) {
	byTime := kadm.ListedOffsets{"t": {0: {Topic: "t", Partition: 0, Offset: 7}, 1: {Topic: "t", Partition: 1, Offset: -1}}}
	for _, tc := range []struct {
		name    string
		target  resetTarget
		current int64
		p       int32
		want    int64
		wantErr bool
	}{
		{"earliest", resetTarget{kind: "earliest"}, 50, 0, 10, false},
		{"latest", resetTarget{kind: "latest"}, 50, 0, 100, false},
		{"offset inside", resetTarget{kind: "offset", value: 42}, -1, 0, 42, false},
		{"offset below the log start", resetTarget{kind: "offset", value: 3}, -1, 0, 10, false},
		{"offset past the end", resetTarget{kind: "offset", value: 300}, -1, 0, 100, false},
		{"timestamp found (clamped to start)", resetTarget{kind: "timestamp", value: 1}, -1, 0, 10, false},
		{"timestamp after every record", resetTarget{kind: "timestamp", value: 1}, -1, 1, 100, false},
		{"shift back", resetTarget{kind: "shift", value: -5}, 50, 0, 45, false},
		{"shift forward past the end", resetTarget{kind: "shift", value: 500}, 50, 0, 100, false},
		{"shift without a commit", resetTarget{kind: "shift", value: 1}, -1, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resetOffset(tc.target, tc.current, 10, 100, byTime, "t", tc.p)
			if tc.wantErr != (err != nil) || (!tc.wantErr && got != tc.want) {
				t.Fatalf("= %d, %v; want %d (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestGroupResetUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"group", "reset-offsets", "g", "--topic", "t"}, "give exactly one of"},
		{[]string{"group", "reset-offsets", "g", "--topic", "t", "--to-earliest", "--to-latest"}, "give exactly one of"},
		{[]string{"group", "reset-offsets", "g", "--to-earliest"}, "give either --topic"},
		{[]string{"group", "reset-offsets", "g", "--topic", "t", "--all-topics", "--to-earliest"}, "give either --topic"},
		{[]string{"group", "reset-offsets", "g", "--topic", "t", "--to-offset", "-3"}, "must not be negative"},
		{[]string{"group", "reset-offsets", "g", "--topic", "t", "--to-datetime", "soon"}, "--to-datetime"},
		{[]string{"group", "reset-offsets", "--topic", "t", "--to-earliest"}, "missing GROUP"},
		{[]string{"group", "delete"}, "missing GROUP"},
	} {
		code, _, stderr := runCapture(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want usage error mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}
