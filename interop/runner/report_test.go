package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteMarkdown renders two matrix runs and a foreign JSON: per-client totals under each
// table, a run's notes file after its table, the replication factor in the heading, and no
// section for a JSON that is not a matrix run.
func TestWriteMarkdown(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	single := &Run{Target: "gregor", Bootstrap: "127.0.0.1:28092", Clients: []string{"java", "kcat"},
		Scenarios: []string{"metadata", "admin"}, Cells: map[string]map[string]Cell{}}
	single.set("java", "metadata", Cell{Status: Pass})
	single.set("java", "admin", Cell{Status: Pass})
	single.set("kcat", "metadata", Cell{Status: Pass})
	single.set("kcat", "admin", Cell{Status: Skip, Detail: "kcat has no admin API"})
	cluster := &Run{Target: "gregor-3node", Bootstrap: "127.0.0.1:28092,127.0.0.1:28192", ReplicationFactor: 3,
		Clients: []string{"java"}, Scenarios: []string{"metadata", "admin"}, Cells: map[string]map[string]Cell{}}
	cluster.set("java", "metadata", Cell{Status: Pass})
	cluster.set("java", "admin", Cell{Status: Fail, Detail: "NOT_CONTROLLER"})
	for name, r := range map[string]*Run{"gregor": single, "gregor-3node": cluster} {
		if err := writeJSON(filepath.Join(res, name+".json"), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(res, "diff.json"), []byte(`{"requests": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(res, "gregor-3node.notes.md"), []byte("Diagnosis: raft churn.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(dir, "RESULTS.md")
	if err := writeMarkdown(md, res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	sections := map[string]string{}
	for _, sec := range strings.Split(out, "\n## Target: ")[1:] {
		name, _, _ := strings.Cut(sec, " ")
		sections[name] = sec
	}
	one, three := sections["gregor"], sections["gregor-3node"]
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"both targets rendered", one != "" && three != ""},
		{"no section for diff.json", len(sections) == 2},
		{"single-node totals", strings.Contains(one, "| **pass / fail** | 2 / 0 | 1 / 0 |")},
		{"cluster totals", strings.Contains(three, "| **pass / fail** | 1 / 1 |")},
		{"replication factor in heading", strings.Contains(three, "topics created with replication factor 3")},
		{"single node heading without it", !strings.Contains(one, "replication factor")},
		{"notes after the cluster table", strings.Contains(three, "Diagnosis: raft churn.")},
		{"notes only there", strings.Count(out, "Diagnosis: raft churn.") == 1},
	} {
		if !c.ok {
			t.Errorf("%s:\n%s", c.name, out)
		}
	}
}
