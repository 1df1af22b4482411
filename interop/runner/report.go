package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Status values, as printed in the matrix.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// Cell is one client × scenario outcome.
type Cell struct {
	Status     string `json:"status"`
	Detail     string `json:"detail,omitempty"`
	DurationMs int64  `json:"duration_ms"`
}

// Run is one invocation of the matrix against one target; it is what results/<target>.json holds.
type Run struct {
	Target     string    `json:"target"`
	Bootstrap  string    `json:"bootstrap"`
	Started    time.Time `json:"started"`
	DurationMs int64     `json:"duration_ms"`
	Smoke      bool      `json:"smoke"`
	// ReplicationFactor is that of the topics the drivers created (absent means 1).
	ReplicationFactor int16                      `json:"replication_factor,omitempty"`
	APIs              map[string][2]int16        `json:"advertised_apis"`
	Mechanisms        []string                   `json:"sasl_mechanisms,omitempty"`
	Clients           []string                   `json:"clients"`
	Scenarios         []string                   `json:"scenarios"`
	Cells             map[string]map[string]Cell `json:"cells"` // client -> scenario -> cell
}

func (r *Run) set(client, scenario string, c Cell) {
	if r.Cells[client] == nil {
		r.Cells[client] = map[string]Cell{}
	}
	r.Cells[client][scenario] = c
}

func (r *Run) counts() (pass, fail, skip int) {
	for _, m := range r.Cells {
		for _, c := range m {
			switch c.Status {
			case Pass:
				pass++
			case Fail:
				fail++
			default:
				skip++
			}
		}
	}
	return
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("interop: encode %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("interop: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// writeMarkdown renders every results/*.json beside resultsDir's parent as RESULTS.md, so a
// run against one target keeps the other target's last table. results/NAME.notes.md, when
// present, follows NAME's table.
func writeMarkdown(mdPath, resultsDir string) error {
	files, _ := filepath.Glob(filepath.Join(resultsDir, "*.json"))
	sort.Strings(files)
	var b strings.Builder
	b.WriteString("# Interop matrix\n\n")
	b.WriteString("Written by `make interop` (`go run ./interop/runner`); the scenarios are described in\n")
	b.WriteString("[SCENARIOS.md](SCENARIOS.md). A cell is pass, fail (with the error) or skip (with the reason).\n")
	b.WriteString("`skip (not implemented)` means the target does not advertise an API the scenario needs;\n")
	b.WriteString("it flips to a real run as soon as the target advertises it.\n")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("interop: %w", err)
		}
		var r Run
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("interop: %s: %w", f, err)
		}
		if r.Target == "" {
			continue // another tool's JSON in results/ (interop/diff writes diff.json there)
		}
		p, fl, s := r.counts()
		kind := "full"
		if r.Smoke {
			kind = "smoke"
		}
		kind += " run"
		if r.ReplicationFactor > 1 {
			kind += fmt.Sprintf(", topics created with replication factor %d", r.ReplicationFactor)
		}
		fmt.Fprintf(&b, "\n## Target: %s (%s, %s)\n\n", r.Target, kind, r.Bootstrap)
		fmt.Fprintf(&b, "%s, %.0f s: %d pass, %d fail, %d skip.\n\n", r.Started.UTC().Format("2006-01-02 15:04 UTC"),
			float64(r.DurationMs)/1000, p, fl, s)
		b.WriteString("| scenario |")
		for _, c := range r.Clients {
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n|---|")
		for range r.Clients {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		var notes []string
		for _, sc := range r.Scenarios {
			b.WriteString("| " + sc + " |")
			for _, cl := range r.Clients {
				c, ok := r.Cells[cl][sc]
				if !ok {
					b.WriteString(" – |")
					continue
				}
				label := c.Status
				if c.Status == Skip && strings.HasPrefix(c.Detail, "not implemented") {
					label = "skip (not implemented)"
				}
				if c.Detail != "" && !(c.Status == Skip && strings.HasPrefix(c.Detail, "not implemented")) {
					notes = append(notes, fmt.Sprintf("%s / %s: %s", cl, sc, c.Detail))
					label += fmt.Sprintf(" [%d]", len(notes))
				}
				b.WriteString(" " + label + " |")
			}
			b.WriteString("\n")
		}
		b.WriteString("| **pass / fail** |")
		for _, cl := range r.Clients {
			var pass, fail int
			for _, sc := range r.Scenarios {
				switch r.Cells[cl][sc].Status {
				case Pass:
					pass++
				case Fail:
					fail++
				}
			}
			fmt.Fprintf(&b, " %d / %d |", pass, fail)
		}
		b.WriteString("\n")
		if len(notes) > 0 {
			b.WriteString("\n")
			for i, n := range notes {
				fmt.Fprintf(&b, "%d. %s\n", i+1, mdEscape(n))
			}
		}
		skips := map[string]bool{}
		for _, sc := range r.Scenarios {
			for _, cl := range r.Clients {
				if c := r.Cells[cl][sc]; c.Status == Skip && strings.HasPrefix(c.Detail, "not implemented") {
					skips[sc+": "+c.Detail] = true
				}
			}
		}
		if len(skips) > 0 {
			b.WriteString("\nNot implemented by this target:\n\n")
			var ks []string
			for k := range skips {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				b.WriteString("- " + mdEscape(k) + "\n")
			}
		}
		// Hand-written notes on a run (diagnosis of its failures) live beside its JSON and
		// survive the next run's rewrite of this file.
		if extra, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".notes.md"); err == nil {
			b.WriteString("\n" + strings.TrimSpace(string(extra)) + "\n")
		}
	}
	return os.WriteFile(mdPath, []byte(b.String()), 0o644)
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

func itoa(n int) string { return fmt.Sprint(n) }

func join(s []string, sep string) string { return strings.Join(s, sep) }
