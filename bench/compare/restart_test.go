package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseSizesMB(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"256,1024", []int{256, 1024}, false},
		{" 1024, 256 ,256,", []int{256, 1024}, false},
		{"0", nil, true},
		{"-5", nil, true},
		{"1GB", nil, true},
	} {
		got, err := parseSizesMB(tc.in)
		if (err != nil) != tc.bad || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseSizesMB(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestIdleTopicsAndRSSSteps(t *testing.T) {
	for _, tc := range []struct {
		total  int
		topics []int32
		steps  []int
	}{
		{0, nil, []int{0}},
		{500, []int32{500}, []int{0, 500}},
		{1000, []int32{1000}, []int{0, 1000}},
		{2500, []int32{1000, 1000, 500}, []int{0, 1000, 2500}},
		{10000, []int32{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, []int{0, 1000, 10000}},
	} {
		if got := idleTopics(tc.total); !reflect.DeepEqual(got, tc.topics) {
			t.Errorf("idleTopics(%d) = %v, want %v", tc.total, got, tc.topics)
		}
		if got := rssSteps(tc.total); !reflect.DeepEqual(got, tc.steps) {
			t.Errorf("rssSteps(%d) = %v, want %v", tc.total, got, tc.steps)
		}
		// Every step falls on a topic boundary: measureStartup creates whole topics.
		sum, bounds := 0, map[int]bool{0: true}
		for _, p := range idleTopics(tc.total) {
			sum += int(p)
			bounds[sum] = true
		}
		for _, s := range rssSteps(tc.total) {
			if !bounds[s] {
				t.Errorf("total %d: RSS step %d is not a topic boundary", tc.total, s)
			}
		}
	}
}

func TestSpreadTargets(t *testing.T) {
	got := spreadTargets([]string{"a", "b"}, []int32{3, 1})
	want := []topicPartition{{"a", 0}, {"b", 0}, {"a", 1}, {"a", 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("spreadTargets = %v, want %v", got, want)
	}
}

func TestCheckpointEntry(t *testing.T) {
	text := "0\n3\nbench-recovery 0 4711\nbench-recovery 1 12\nbench-recovery-x 0 99\n"
	for _, tc := range []struct {
		topic string
		part  int32
		want  int64
	}{
		{"bench-recovery", 0, 4711},
		{"bench-recovery", 1, 12},
		{"bench-recovery-x", 0, 99},
		{"bench-recovery", 2, -1},
		{"other", 0, -1},
	} {
		if got := checkpointEntry(text, tc.topic, tc.part); got != tc.want {
			t.Errorf("checkpointEntry(%s, %d) = %d, want %d", tc.topic, tc.part, got, tc.want)
		}
	}
	for _, bad := range []string{"", "1\n1\nt 0 5\n", "0\n1\nt 0 five\n", "0\n1\nt 0\n"} {
		if got := checkpointEntry(bad, "t", 0); got != -1 {
			t.Errorf("checkpointEntry(%q) = %d, want -1", bad, got)
		}
	}
}

func TestSplitPartitionDir(t *testing.T) {
	if topic, p, err := splitPartitionDir("bench-recovery-12"); err != nil || topic != "bench-recovery" || p != 12 {
		t.Fatalf("splitPartitionDir = %q, %d, %v", topic, p, err)
	}
	for _, bad := range []string{"nodash", "-3", "t-", "t-x"} {
		if _, _, err := splitPartitionDir(bad); err == nil {
			t.Errorf("splitPartitionDir(%q) succeeded", bad)
		}
	}
}

func TestSegmentsPastRecoveryPoint(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{
		"00000000000000000000.log": 100, "00000000000000000050.log": 200, "00000000000000000120.log": 40,
		"00000000000000000120.index": 4096, "leader-epoch-checkpoint": 10,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := activeSegmentBase(dir); err != nil || a != 120 {
		t.Fatalf("activeSegmentBase = %d, %v; want 120", a, err)
	}
	for _, tc := range []struct{ rp, want int64 }{{0, 340}, {49, 340}, {50, 240}, {119, 240}, {120, 40}, {500, 40}} {
		if got, err := bytesFrom(dir, tc.rp); err != nil || got != tc.want {
			t.Errorf("bytesFrom(rp %d) = %d, %v; want %d", tc.rp, got, err, tc.want)
		}
	}
	if _, err := activeSegmentBase(t.TempDir()); err == nil {
		t.Fatal("activeSegmentBase of an empty directory succeeded")
	}
}

func TestFitPartitions(t *testing.T) {
	for _, tc := range []struct {
		want  int
		limit uint64
		fit   int
	}{
		{10000, 200000, 10000},
		{10000, 1 << 40, 10000},
		{10000, 20000, 10000},
		{10000, 14000, 10000},
		{10000, 13999, 9000},
		{10000, 9999, 5000},
		{1000, 20000, 1000},
		{10000, 1024, 0},
	} {
		if got := fitPartitions(tc.want, tc.limit); got != tc.fit {
			t.Errorf("fitPartitions(%d, %d) = %d, want %d", tc.want, tc.limit, got, tc.fit)
		}
	}
}
