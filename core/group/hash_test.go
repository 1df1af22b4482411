package group

import "testing"

func TestPartitionForMatchesJavaHashCode(t *testing.T) {
	for _, tc := range []struct {
		group      string
		hash       int32
		partitions int32
		want       int32
	}{
		{"", 0, 50, 0},
		{"a", 97, 50, 47},
		{"abc", 96354, 50, 4},
		// Java's hashCode of this string is Integer.MIN_VALUE; Utils.abs maps it to 0.
		{"polygenelubricants", -1 << 31, 50, 0},
		{"é", 233, 50, 33},
		// Outside the BMP: two UTF-16 code units (0xD83D, 0xDE00).
		{"😀", 0xD83D*31 + 0xDE00, 50, (0xD83D*31 + 0xDE00) % 50},
		{"hello", 99162322, 50, 22},
		// A negative hash: abs before the modulo.
		{"Hello World", -862545276, 50, 26},
	} {
		if got := javaStringHash(tc.group); got != tc.hash {
			t.Errorf("hash(%q) = %d, want %d", tc.group, got, tc.hash)
		}
		if got := PartitionFor(tc.group, tc.partitions); got != tc.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", tc.group, tc.partitions, got, tc.want)
		}
	}
	if got := PartitionFor("g", 0); got != -1 {
		t.Errorf("PartitionFor with no partitions = %d, want -1", got)
	}
}
