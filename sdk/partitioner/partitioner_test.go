package partitioner

import "testing"

// Golden values from the Java client's murmur2 tests.
func TestMurmur2Golden(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	} {
		if got := Murmur2([]byte(tc.in)); got != tc.want {
			t.Errorf("Murmur2(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestKeyPartitionInRange(t *testing.T) {
	for n := int32(1); n < 50; n++ {
		for _, k := range []string{"", "a", "21", "foobar", "a-little-bit-long-string"} {
			p := KeyPartition([]byte(k), n)
			if p < 0 || p >= n {
				t.Fatalf("KeyPartition(%q, %d) = %d", k, n, p)
			}
		}
	}
	if got := KeyPartition([]byte("x"), 0); got != 0 {
		t.Fatalf("zero partitions: %d", got)
	}
}

func TestRoundRobinNullKeys(t *testing.T) {
	var rr RoundRobin
	seen := map[int32]int{}
	for i := 0; i < 9; i++ {
		seen[rr.Partition(Record{}, 3)]++
	}
	for p := int32(0); p < 3; p++ {
		if seen[p] != 3 {
			t.Fatalf("partition %d got %d of 9 null-key records", p, seen[p])
		}
	}
	if got, want := rr.Partition(Record{Key: []byte("21")}, 7), KeyPartition([]byte("21"), 7); got != want {
		t.Fatalf("keyed record went to %d, want %d", got, want)
	}
}
