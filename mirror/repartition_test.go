package mirror

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestSpreadPartition(t *testing.T) {
	// The default partitioner of franz-go is Kafka's: murmur2 of the key.
	kafka := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	keys := [][]byte{{}, []byte("a"), []byte("ab"), []byte("abc"), []byte("abcd"), []byte("abcde"),
		[]byte("orders-42"), []byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9")}
	for i := 0; i < 200; i++ {
		keys = append(keys, []byte(fmt.Sprintf("key-%d", i)))
	}
	for _, n := range []int32{1, 3, 7, 12} {
		for _, k := range keys {
			want := int32(kafka.Partition(&kgo.Record{Key: k}, int(n)))
			if got := spreadPartition(k, 5, n); got != want {
				t.Fatalf("key %q over %d partitions: %d, want %d", k, n, got, want)
			}
		}
	}
	for _, tt := range []struct{ src, n, want int32 }{{0, 3, 0}, {4, 3, 1}, {5, 9, 5}, {8, 1, 0}} {
		if got := spreadPartition(nil, tt.src, tt.n); got != tt.want {
			t.Errorf("keyless from partition %d over %d: %d, want %d", tt.src, tt.n, got, tt.want)
		}
	}
}

func TestAckTracker(t *testing.T) {
	type step struct {
		ack   int64
		last  int64
		moved bool
	}
	for _, tt := range []struct {
		name  string
		sent  []int64
		steps []step
	}{
		{"in order", []int64{3, 4, 5}, []step{{3, 3, true}, {4, 4, true}, {5, 5, true}}},
		{"out of order", []int64{3, 4, 5, 7}, []step{{5, 0, false}, {4, 0, false}, {3, 5, true}, {7, 7, true}}},
		{"gap in source offsets", []int64{10, 12, 20}, []step{{20, 0, false}, {10, 10, true}, {12, 20, true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var a ackTracker
			for _, up := range tt.sent {
				a.sent(up)
			}
			for i, s := range tt.steps {
				last, moved := a.acked(s.ack)
				if moved != s.moved || (moved && last != s.last) {
					t.Fatalf("step %d ack %d: (%d, %v), want (%d, %v)", i, s.ack, last, moved, s.last, s.moved)
				}
			}
			if len(a.pending) != 0 || len(a.done) != 0 {
				t.Fatalf("left pending %v done %v", a.pending, a.done)
			}
		})
	}
}

func TestAfterPositionSync(t *testing.T) {
	s := func(up, down int64) OffsetSync { return OffsetSync{Topic: "t", Upstream: up, Downstream: down} }
	for _, tt := range []struct {
		name     string
		in, want []OffsetSync
		position int64 // -2: none
	}{
		{"no position syncs", []OffsetSync{s(-1, -1+1), s(5, 6)}, []OffsetSync{s(-1, 0), s(5, 6)}, -2},
		{"last is a position", []OffsetSync{s(-1, 0), s(9, -1)}, nil, 9},
		{"translated again after a position", []OffsetSync{s(9, -1), s(19, 4), s(25, 10)}, []OffsetSync{s(19, 4), s(25, 10)}, -2},
		{"empty", nil, nil, -2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, pos := afterPositionSync(tt.in)
			if !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Fatalf("syncs %v, want %v", got, tt.want)
			}
			switch {
			case tt.position == -2 && pos != nil:
				t.Fatalf("position %v, want none", *pos)
			case tt.position != -2 && (pos == nil || pos.Upstream != tt.position):
				t.Fatalf("position %v, want upstream %d", pos, tt.position)
			}
		})
	}
}
