package main

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/config"
)

func TestMarshalYAML(t *testing.T) {
	type row struct {
		Name  string   `json:"name"`
		N     int      `json:"n"`
		Ptr   *int64   `json:"ptr"`
		Tags  []string `json:"tags"`
		Empty []int    `json:"empty"`
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"scalar list", []int{1, 2}, "- 1\n- 2\n"},
		{"empty list", []int{}, "[]\n"},
		{"struct", row{Name: "orders", N: 3, Tags: []string{"a"}, Empty: []int{}},
			"name: orders\n\"n\": 3\nptr: null\ntags:\n  - a\nempty: []\n"},
		{"list of structs", []row{{Name: "a", Tags: []string{}}, {Name: "b", N: 1, Tags: []string{"x", "y"}}},
			"- name: a\n  \"n\": 0\n  ptr: null\n  tags: []\n  empty: null\n- name: b\n  \"n\": 1\n  ptr: null\n  tags:\n    - x\n    - \"y\"\n  empty: null\n"},
		{"strings that need quotes", []string{"true", "123", "", " pad", "a: b", "-x", "ü", "null", "line\nbreak", "plain.name-1"},
			"- \"true\"\n- \"123\"\n- \"\"\n- \" pad\"\n- \"a: b\"\n- \"-x\"\n- \"ü\"\n- \"null\"\n- \"line\\nbreak\"\n- plain.name-1\n"},
		{"nested maps", map[string]any{"b": map[string]any{}, "a": map[string]int{"x": 1}}, "a:\n  x: 1\nb: {}\n"},
		{"bool and float", map[string]any{"ok": true, "f": 1.5}, "f: 1.5\nok: true\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := marshalYAML(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestOutputFlagCheck(t *testing.T) {
	for _, tc := range []struct {
		format string
		ok     bool
	}{{"table", true}, {"json", true}, {"yaml", true}, {"xml", false}, {"", false}, {"JSON", false}} {
		err := (&outputFlag{format: tc.format}).check()
		var ue usageError
		if (err == nil) != tc.ok || (err != nil && !errors.As(err, &ue)) {
			t.Errorf("%q: %v", tc.format, err)
		}
	}
}

func TestFilterNames(t *testing.T) {
	for _, tc := range []struct {
		names, used []string
		prefix      string
		want        []string
	}{
		{[]string{"orders", "payments", "order-dlq"}, nil, "ord", []string{"orders", "order-dlq"}},
		{[]string{"orders", "payments"}, []string{"orders"}, "", []string{"payments"}},
		{[]string{"orders"}, nil, "x", nil},
	} {
		got := filterNames(tc.names, tc.used, tc.prefix)
		var gs []string
		for _, c := range got {
			gs = append(gs, string(c))
		}
		if !reflect.DeepEqual(gs, tc.want) {
			t.Errorf("filterNames(%v, %v, %q) = %v, want %v", tc.names, tc.used, tc.prefix, gs, tc.want)
		}
	}
}

// TestOutputAgainstABroker runs the CLI against an in-process broker and
// decodes its JSON output.
func TestOutputAgainstABroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	targets, stop, err := startBenchBroker(ctx, config.DurabilityPageCache, []string{benchPlaintext})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	bs := targets[0].Addr
	cli := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errOut := runCapture(t, stdin, append(args, "--bootstrap", bs)...)
		if code != exitOK {
			t.Fatalf("gregor %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	cli("", "topic", "create", "orders", "--partitions", "2")
	cli("a\nb\nc\n", "produce", "orders", "--partition", "1")
	cli("", "group", "reset-offsets", "billing", "--topic", "orders", "--to-offset", "1", "--execute")

	var topics []topicSummary
	decode(t, cli("", "topic", "list", "-o", "json"), &topics)
	if want := []topicSummary{{Topic: "orders", Partitions: 2, ReplicationFactor: 1}}; !reflect.DeepEqual(topics, want) {
		t.Fatalf("topic list: %+v", topics)
	}
	var described []topicView
	decode(t, cli("", "topic", "describe", "orders", "--output", "json"), &described)
	if len(described) != 1 || len(described[0].PartitionDetails) != 2 {
		t.Fatalf("topic describe: %+v", described)
	}
	p1 := described[0].PartitionDetails[1]
	if p1.LogEndOffset == nil || *p1.LogEndOffset != 3 || p1.LogStartOffset == nil || *p1.LogStartOffset != 0 || len(p1.ISR) != 1 {
		t.Fatalf("partition 1: %+v", p1)
	}
	var groups []groupSummary
	decode(t, cli("", "group", "list", "-o", "json"), &groups)
	if len(groups) != 1 || groups[0].Group != "billing" {
		t.Fatalf("group list: %+v", groups)
	}
	var gv []groupView
	decode(t, cli("", "group", "describe", "billing", "-o", "json"), &gv)
	if len(gv) != 1 {
		t.Fatalf("group describe: %+v", gv)
	}
	var lag int64
	for _, p := range gv[0].Partitions {
		if p.Lag != nil {
			lag += *p.Lag
		}
	}
	if lag != 2 {
		t.Fatalf("billing lag %d, want 2: %+v", lag, gv[0])
	}
	if y := cli("", "topic", "list", "-o", "yaml"); y != "- topic: orders\n  partitions: 2\n  replication_factor: 1\n" {
		t.Fatalf("topic list yaml: %q", y)
	}
	// Errors say what to do next and exit 1; a bad --output is a usage error.
	code, _, errOut := runCapture(t, "", "topic", "describe", "nope", "--bootstrap", bs)
	if code != exitError || !strings.Contains(errOut, "gregor topic create nope") {
		t.Fatalf("describe missing topic: exit %d: %s", code, errOut)
	}
	if code, _, _ := runCapture(t, "", "topic", "list", "-o", "xml", "--bootstrap", bs); code != exitUsage {
		t.Fatalf("bad --output: exit %d", code)
	}
	// Dynamic completion of topic and group names.
	if _, out, _ := runCapture(t, "", "__complete", "topic", "describe", "--bootstrap", bs, "or"); !strings.HasPrefix(out, "orders\n") {
		t.Fatalf("topic completion: %q", out)
	}
	if _, out, _ := runCapture(t, "", "__complete", "group", "describe", "--bootstrap", bs, ""); !strings.HasPrefix(out, "billing\n") {
		t.Fatalf("group completion: %q", out)
	}
}

func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
}
