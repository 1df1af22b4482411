package partition

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestTrafficAndISRChanges(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	var in int64
	for i := 0; i < 4; i++ {
		b := batch(t, 5)
		in += int64(len(b))
		if _, err := p.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	res, err := p.Read(0, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Log().Read(0, 1<<20, p.Offsets().HighWatermark, true); err != nil {
		t.Fatal(err)
	}
	// ISR [1] → [1 2 3] (expand) → [1 3] (shrink) → [2] (shrink and expand) → [2] (nothing).
	for _, isr := range [][]int32{{1, 2, 3}, {1, 3}, {2}, {2}} {
		p.SetLeadership(1, 3, []int32{1, 2, 3}, isr)
	}
	got := p.Traffic()
	want := Traffic{BytesIn: in, RecordsIn: 20, BytesOut: int64(len(res.Records)), ISRShrinks: 2, ISRExpands: 2}
	if got != want {
		t.Fatalf("traffic %+v, want %+v", got, want)
	}

	set := NewSet()
	set.Put(p)
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(set).WithNodeID(1))
	expect := `
# HELP gregor_partition_under_replicated 1 when a hosted partition's ISR is smaller than its replica set.
# TYPE gregor_partition_under_replicated gauge
gregor_partition_under_replicated{partition="0",topic="t"} 1
# HELP gregor_partition_isr In-sync replicas of a hosted partition.
# TYPE gregor_partition_isr gauge
gregor_partition_isr{partition="0",topic="t"} 1
# HELP gregor_partition_leader 1 when this broker leads the partition.
# TYPE gregor_partition_leader gauge
gregor_partition_leader{partition="0",topic="t"} 1
# HELP gregor_partition_records_in_total Records appended to a hosted partition since it was opened.
# TYPE gregor_partition_records_in_total counter
gregor_partition_records_in_total{partition="0",topic="t"} 20
# HELP gregor_partition_isr_shrinks_total Times a replica left a hosted partition's ISR.
# TYPE gregor_partition_isr_shrinks_total counter
gregor_partition_isr_shrinks_total{partition="0",topic="t"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expect), "gregor_partition_under_replicated",
		"gregor_partition_isr", "gregor_partition_leader", "gregor_partition_records_in_total", "gregor_partition_isr_shrinks_total"); err != nil {
		t.Fatal(err)
	}
}
