package main

import (
	"strings"
	"testing"
)

func TestWriteCurveTables(t *testing.T) {
	rs := []Result{
		{Metric: "process start to first acknowledged produce", Gregor: 250, Kafka: 4000},
		{Metric: "curve: franz-go produce 1 KB, 100 partition(s), acks=1", Gregor: 150, Kafka: 100},
		{Metric: "curve: franz-go produce 1 KB, 10 partition(s), acks=1", Gregor: 120, Kafka: 0},
		{Metric: "curve: franz-go consume 1 KB, 10 partition(s)", Gregor: 800, Kafka: 400},
		{Metric: "restart with 10000 partitions, 1024 MB: process start to first acknowledged produce", Gregor: 900, Kafka: 18000},
		{Metric: "restart with 1000 partitions, 16 MB: process start to first acknowledged produce", Gregor: 300, Kafka: 6000},
		{Metric: "restart with 1000 partitions, 16 MB: process start to a produce acknowledged on every partition", Gregor: 310, Kafka: 6100},
		{Metric: "franz-go produce 100 B random keyed, 1 partition(s), acks=1", Gregor: 1, Kafka: 1},
	}
	var b strings.Builder
	writeCurveTables(&b, rs)
	out := b.String()
	for _, want := range []string{
		"| partitions | Gregor produce | Kafka produce | ratio | Gregor consume | Kafka consume | ratio |",
		"| 10 | 120 | – | n/a | 800 | 400 | 2.00 |",
		"| 100 | 150 | 100 | 1.50 | – | – | – |",
		"| 0 partitions, 0 MB | 250 | 4000 | 0.06 | – | – | – |",
		"| 1000 partitions, 16 MB | 300 | 6000 | 0.05 | 310 | 6100 | 0.05 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q in\n%s", want, out)
		}
	}
	// Points ascend by their numbers, not as text.
	if i, j := strings.Index(out, "| 10 |"), strings.Index(out, "| 100 |"); i < 0 || j < i {
		t.Errorf("10 partitions not before 100:\n%s", out)
	}
	if i, j := strings.Index(out, "| 1000 partitions"), strings.Index(out, "| 10000 partitions"); i < 0 || j < i {
		t.Errorf("1000 partitions not before 10000:\n%s", out)
	}
	// Tables without figures are left out.
	if strings.Contains(out, "idle connections") || strings.Contains(out, "kill -9") {
		t.Errorf("a table without figures was written:\n%s", out)
	}
	if strings.Contains(out, "100 B random") {
		t.Errorf("a row that is no curve point was written:\n%s", out)
	}
}
