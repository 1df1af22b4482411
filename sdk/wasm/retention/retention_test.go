package retention

import (
	"testing"

	"github.com/gregorbroker/gregor/sdk/retention"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

func TestHandle(t *testing.T) {
	p := retention.Partition{Topic: "t", Segments: []retention.Segment{{BaseOffset: 0, NextOffset: 10}, {BaseOffset: 10, NextOffset: 20}},
		Groups: []retention.GroupOffset{{Group: "g", Offset: 15}}}
	buf := make([]byte, abi.PartitionSize(&p))
	abi.PutPartition(buf, &p)
	for _, tc := range []struct {
		name string
		fn   func(retention.Partition) int
		buf  []byte
		want int32
	}{
		{"consumed", retention.ConsumedByAll, buf, 1},
		{"no handler", nil, buf, -abi.CodeNoHandler},
		{"negative", func(retention.Partition) int { return -1 }, buf, -abi.CodeFailed},
		{"panic", func(retention.Partition) int { panic("x") }, buf, -abi.CodeFailed},
		{"truncated", retention.ConsumedByAll, buf[:9], -abi.CodeBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Register(tc.fn)
			if got := Handle(tc.buf); got != tc.want {
				t.Fatalf("got %d want %d", got, tc.want)
			}
		})
	}
}
