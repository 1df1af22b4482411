// Command diff is Gregor's differential check: it sends the same requests, at the same
// versions, to Gregor and to Apache Kafka and reports every answer field that differs where
// Kafka is deterministic (error codes, offsets, high watermarks, ListOffsets answers, config
// names and defaults, metadata shape). Topic ids, cluster ids, producer ids and broker-chosen
// timestamps are compared only for presence. It writes interop/DIFF.md and
// interop/results/diff.json and exits 0 whatever it finds: differences are findings.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gregorbroker/gregor/interop/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// broker is one side of the comparison.
type broker struct {
	name     string
	addr     string
	conn     *wire.Conn
	versions map[int16][2]int16
	facts    map[string]string
}

func (b *broker) fact(k string, v any) { b.facts[k] = fmt.Sprint(v) }

// advertised is the version range b advertises for key, as "v0-2" or "not advertised".
func (b *broker) advertised(key int16) string {
	v, ok := b.versions[key]
	if !ok {
		return "not advertised"
	}
	return fmt.Sprintf("v%d-%d", v[0], v[1])
}

// send issues req at version v on a fresh connection when the previous one broke.
func (b *broker) send(req kmsg.Request, v int16) (kmsg.Response, error) {
	if b.conn == nil {
		c, err := wire.Dial(b.addr, 20*time.Second)
		if err != nil {
			return nil, err
		}
		b.conn = c
	}
	req.SetVersion(v)
	resp := req.ResponseKind()
	if err := b.conn.RoundTrip(req, resp); err != nil {
		b.conn.Close()
		b.conn = nil
		return nil, err
	}
	return resp, nil
}

// pair runs the same probe against both brokers.
type pair struct {
	g, k  *broker
	notes []string
}

// version picks the version both brokers accept, not above pref; ok is false when none.
func (p *pair) version(key, pref int16) (int16, bool) {
	gv, gok := p.g.versions[key]
	kv, kok := p.k.versions[key]
	if !gok || !kok {
		return 0, false
	}
	v := min(pref, gv[1], kv[1])
	if v < max(gv[0], kv[0]) {
		return 0, false
	}
	return v, true
}

// each runs f on both brokers with the negotiated version of key.
func (p *pair) each(key, pref int16, f func(b *broker, v int16)) {
	v, ok := p.version(key, pref)
	if !ok {
		p.notes = append(p.notes, fmt.Sprintf("%s: no common version (Gregor %s, Kafka %s); not compared",
			kmsg.NameForKey(key), p.g.advertised(key), p.k.advertised(key)))
		return
	}
	for _, b := range []*broker{p.g, p.k} {
		f(b, v)
	}
}

// Difference is one fact where the brokers disagree ("" means the fact is absent).
type Difference struct {
	Fact   string `json:"fact"`
	Gregor string `json:"gregor"`
	Kafka  string `json:"kafka"`
}

func main() {
	gaddr := flag.String("gregor", "127.0.0.1:28092", "Gregor bootstrap address")
	kaddr := flag.String("kafka", "127.0.0.1:29092", "Apache Kafka bootstrap address")
	out := flag.String("out", "interop", "directory for DIFF.md and results/diff.json")
	flag.Parse()
	diffs, notes, err := run(*gaddr, *kaddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := write(*out, diffs, notes); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("diff: %d differences between Gregor and Apache Kafka (%s)\n", len(diffs), filepath.Join(*out, "DIFF.md"))
	for _, d := range diffs {
		fmt.Printf("  %-70s gregor=%-22s kafka=%s\n", d.Fact, show(d.Gregor), show(d.Kafka))
	}
}

func show(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

func run(gaddr, kaddr string) ([]Difference, []string, error) {
	p := &pair{g: &broker{name: "gregor", addr: gaddr, facts: map[string]string{}},
		k: &broker{name: "kafka", addr: kaddr, facts: map[string]string{}}}
	for _, b := range []*broker{p.g, p.k} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "gregor-interop-diff", "1"
		resp, err := b.send(req, 3)
		if err != nil {
			return nil, nil, fmt.Errorf("diff: %s at %s: %w", b.name, b.addr, err)
		}
		b.versions = map[int16][2]int16{}
		for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
			b.versions[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
		}
	}
	// A run-unique prefix keeps topics from earlier runs out of the answers.
	prefix := fmt.Sprintf("diff-%x", time.Now().UnixNano()/1e6%0xffffff)
	probeAPIVersions(p)
	probeCreateTopics(p, prefix)
	probeMetadata(p, prefix)
	probeProduce(p, prefix)
	probeListOffsets(p, prefix)
	probeFetch(p, prefix)
	probeDescribeConfigs(p, prefix)
	probeAdmin(p, prefix)
	probeQuorumAndTelemetry(p)
	probeGroupsAndELR(p, prefix)
	var diffs []Difference
	keys := map[string]bool{}
	for k := range p.g.facts {
		keys[k] = true
	}
	for k := range p.k.facts {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if p.g.facts[k] != p.k.facts[k] {
			diffs = append(diffs, Difference{Fact: k, Gregor: p.g.facts[k], Kafka: p.k.facts[k]})
		}
	}
	return diffs, p.notes, nil
}

func write(dir string, diffs []Difference, notes []string) error {
	b, err := json.MarshalIndent(map[string]any{"when": time.Now().UTC(), "differences": diffs, "notes": notes}, "", "  ")
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results", "diff.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	var m strings.Builder
	m.WriteString("# Gregor vs Apache Kafka: differential check\n\n")
	m.WriteString("Written by `make interop-diff` (`go run ./interop/diff`): the same requests at the same versions\n")
	m.WriteString("to both brokers; every fact below differs. `(absent)` means that broker gave no such answer.\n")
	m.WriteString("Ids and broker-chosen timestamps are compared for presence only.\n\n")
	fmt.Fprintf(&m, "%s: %d differences.\n\n| fact | Gregor | Apache Kafka |\n|---|---|---|\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), len(diffs))
	for _, d := range diffs {
		fmt.Fprintf(&m, "| `%s` | %s | %s |\n", d.Fact, cell(d.Gregor), cell(d.Kafka))
	}
	explained := false
	for _, d := range diffs {
		if e, ok := explanations[d.Fact]; ok {
			if !explained {
				m.WriteString("\nExplained differences:\n\n")
				explained = true
			}
			fmt.Fprintf(&m, "- `%s`: %s\n", d.Fact, e)
		}
	}
	if len(notes) > 0 {
		m.WriteString("\nNot compared:\n\n")
		for _, n := range notes {
			m.WriteString("- " + n + "\n")
		}
	}
	return os.WriteFile(filepath.Join(dir, "DIFF.md"), []byte(m.String()), 0o644)
}

func cell(s string) string {
	if s == "" {
		return "(absent)"
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

func kerrName(code int16) string {
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return ""
}
