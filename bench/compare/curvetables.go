package main

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The cost curves of issue 17 as small tables, built from the rows of the main table: one
// line per point (partitions, connections, MB), Gregor, Kafka and their ratio per series.
// bench/RESULTS.md holds them in the same layout.

// curveSeries is one column pair of a curve table: the rows whose metric matches re, the
// point read from its first group.
type curveSeries struct {
	name string
	re   *regexp.Regexp
}

// curveTable is one table: its title, the name of its point column and its series.
type curveTable struct {
	title, point, unit string
	series             []curveSeries
}

var curveTables = []curveTable{
	{"Throughput vs partitions (franz-go, 1 KB random keyed, acks=1)", "partitions", "MB/s", []curveSeries{
		{"produce", regexp.MustCompile(`^curve: franz-go produce 1 KB, (\d+) partition\(s\), acks=1$`)},
		{"consume", regexp.MustCompile(`^curve: franz-go consume 1 KB, (\d+) partition\(s\)$`)},
	}},
	{"RSS vs idle connections (one ApiVersions exchange each)", "connections", "MiB", []curveSeries{
		{"RSS", regexp.MustCompile(`^curve: broker RSS with (\d+) idle connections$`)},
	}},
	{"RSS vs idle partitions (one record each)", "partitions", "MiB", []curveSeries{
		{"RSS", regexp.MustCompile(`^curve: broker RSS with (\d+) idle partitions$`)},
	}},
	{"Start-up vs partitions and data (process start to first acknowledged produce; every partition)", "partitions, MB", "ms", []curveSeries{
		{"first produce", regexp.MustCompile(`^(?:process start to first acknowledged produce|restart with (\d+ partitions, \d+ MB): process start to first acknowledged produce)$`)},
		{"every partition", regexp.MustCompile(`^restart with (\d+ partitions, \d+ MB): process start to a produce acknowledged on every partition$`)},
	}},
	{"Restart after kill -9 vs log size (one partition, " + strconv.Itoa(recoveryTailMB) + " MB written past the checkpointed recovery point)", "log MB", "ms", []curveSeries{
		{"first produce", regexp.MustCompile(`^kill -9 with a (\d+) MB log: process start to first acknowledged produce$`)},
	}},
}

// curveCell is one series' figures at one point.
type curveCell struct{ gregor, kafka float64 }

// writeCurveTables writes every curve table that has at least one figure, in markdown.
func writeCurveTables(w io.Writer, rs []Result) {
	for _, ct := range curveTables {
		points, cells := ct.collect(rs)
		if len(points) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s, %s\n\n", ct.title, ct.unit)
		head, rule := "| "+ct.point+" |", "|---:|"
		for _, s := range ct.series {
			head += fmt.Sprintf(" Gregor %s | Kafka %s | ratio |", s.name, s.name)
			rule += "---:|---:|---:|"
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, rule)
		for _, p := range points {
			line := "| " + p + " |"
			for i := range ct.series {
				c, ok := cells[i][p]
				if !ok {
					line += " – | – | – |"
					continue
				}
				ratio := "n/a"
				if c.kafka != 0 {
					ratio = fmt.Sprintf("%.2f", c.gregor/c.kafka)
				}
				line += fmt.Sprintf(" %s | %s | %s |", num(c.gregor), num(c.kafka), ratio)
			}
			fmt.Fprintln(w, line)
		}
	}
}

// collect finds the table's points in rs (in ascending order of their leading number) and
// each series' figures at them. A metric matched without a point (the empty broker's start)
// is the point "0 partitions, 0 MB".
func (ct curveTable) collect(rs []Result) ([]string, []map[string]curveCell) {
	cells := make([]map[string]curveCell, len(ct.series))
	seen := map[string]bool{}
	var points []string
	for i, s := range ct.series {
		cells[i] = map[string]curveCell{}
		for _, r := range rs {
			m := s.re.FindStringSubmatch(r.Metric)
			if m == nil {
				continue
			}
			p := m[1]
			if p == "" {
				p = "0 partitions, 0 MB"
			}
			cells[i][p] = curveCell{r.Gregor, r.Kafka}
			if !seen[p] {
				seen[p] = true
				points = append(points, p)
			}
		}
	}
	sort.SliceStable(points, func(i, j int) bool { return pointLess(points[i], points[j]) })
	return points, cells
}

// pointLess orders points by their numbers: "1000 partitions, 1024 MB" by 1000, then 1024.
func pointLess(a, b string) bool {
	na, nb := pointNumbers(a), pointNumbers(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	return len(na) < len(nb)
}

func pointNumbers(p string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(p, func(r rune) bool { return r < '0' || r > '9' }) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}
