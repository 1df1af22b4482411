package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestGroupCLI drives gregor group list/describe/reset-offsets/delete
// against an in-process broker.
func TestGroupCLI(t *testing.T) {
	b := startBroker(t, groupConfig)
	const topic, group = "cli-grp", "cli-g"
	createTopic(t, b.Addr, topic, 3, nil)
	produceToEach(t, b.Addr, topic, 3, 10)
	boot := "--bootstrap=" + b.Addr

	// Commit 4, 5, 6 for partitions 0..2 outside group management.
	adm := newAdmin(t, b.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var os kadm.Offsets
	for p := int32(0); p < 3; p++ {
		os.AddOffset(topic, p, int64(4+p), -1)
	}
	if resp, err := adm.CommitOffsets(ctx, group, os); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}

	res := mustCLI(t, 0, "", "group", "describe", group, boot)
	wantContains(t, "describe", res.stdout, "STATE     Empty", "CURRENT-OFFSET", "LOG-END-OFFSET")
	for p, lag := range []int{6, 5, 4} {
		line := fmt.Sprintf("%s  %d  ", topic, p)
		found := false
		for _, l := range strings.Split(res.stdout, "\n") {
			f := strings.Fields(l)
			if strings.HasPrefix(l, topic) && len(f) >= 5 && f[1] == fmt.Sprint(p) {
				found = f[2] == fmt.Sprint(4+p) && f[3] == "10" && f[4] == fmt.Sprint(lag)
			}
		}
		if !found {
			t.Fatalf("describe lacks %q with offset %d, end 10, lag %d:\n%s", line, 4+p, lag, res.stdout)
		}
	}

	// While a member consumes, describe shows it, and lag falls to 0 once
	// it has committed everything.
	as := newAssignments()
	m := startKgoMember(t, b.Addr, group, topic, "cli-member", as)
	eventually(t, 20*time.Second, "the member consumes and commits", func() error {
		if n := len(m.read()); n < 15 { // it resumes after the commits: 6+5+4
			return fmt.Errorf("%d read", n)
		}
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return m.cl.CommitUncommittedOffsets(c)
	})
	res = mustCLI(t, 0, "", "group", "describe", group, boot)
	wantContains(t, "describe with a member", res.stdout, "STATE     Stable", "consumer/", "cli-member", "MEMBERS   1")
	for _, l := range strings.Split(res.stdout, "\n") {
		if f := strings.Fields(l); strings.HasPrefix(l, topic) && (len(f) < 5 || f[3] != "10" || f[4] != "0") {
			t.Fatalf("lag is not 0 after consuming everything: %q\n%s", l, res.stdout)
		}
	}
	res = mustCLI(t, 0, "", "group", "list", boot)
	wantContains(t, "list", res.stdout, "GROUP", group, "Stable", "classic")
	res = mustCLI(t, 0, "", "group", "list", "--state", "Empty", boot)
	if strings.Contains(res.stdout, group) {
		t.Fatalf("list --state Empty shows the stable group:\n%s", res.stdout)
	}

	// Resetting an active group is refused; deleting it too.
	res = mustCLI(t, 1, "", "group", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute", boot)
	wantContains(t, "reset of an active group", res.stderr, "active members")
	res = mustCLI(t, 1, "", "group", "delete", group, boot)
	wantContains(t, "delete of an active group", res.stderr, "still has members")
	m.close()

	// A dry run prints the plan and changes nothing.
	res = mustCLI(t, 0, "", "group", "reset-offsets", group, "--topic", topic+":0,2", "--to-offset", "3", boot)
	wantContains(t, "dry run", res.stdout, "NEW-OFFSET")
	wantContains(t, "dry run", res.stderr, "dry run")
	if got := fetchGroupOffsets(t, b.Addr, group); got[0] != 10 || got[2] != 10 {
		t.Fatalf("dry run committed: %v", got)
	}
	mustCLI(t, 0, "", "group", "reset-offsets", group, "--topic", topic+":0,2", "--to-offset", "3", "--execute", boot)
	if got := fetchGroupOffsets(t, b.Addr, group); got[0] != 3 || got[1] != 10 || got[2] != 3 {
		t.Fatalf("after reset to 3: %v", got)
	}
	mustCLI(t, 0, "", "group", "reset-offsets", group, "--all-topics", "--to-earliest", "--execute", boot)
	if got := fetchGroupOffsets(t, b.Addr, group); got[0] != 0 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("after reset to earliest: %v", got)
	}
	mustCLI(t, 0, "", "group", "reset-offsets", group, "--all-topics", "--shift-by", "4", "--execute", boot)
	mustCLI(t, 0, "", "group", "reset-offsets", group, "--topic", topic+":1", "--to-latest", "--execute", boot)
	if got := fetchGroupOffsets(t, b.Addr, group); got[0] != 4 || got[1] != 10 || got[2] != 4 {
		t.Fatalf("after shift and latest: %v", got)
	}

	res = mustCLI(t, 0, "", "group", "delete", group, boot)
	wantContains(t, "delete", res.stdout, `deleted group "cli-g"`)
	res = mustCLI(t, 1, "", "group", "describe", group, boot)
	wantContains(t, "describe of a deleted group", res.stderr, "does not exist")
}

func fetchGroupOffsets(t *testing.T, addr, group string) map[int32]int64 {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	out := map[int32]int64{}
	offs.Each(func(o kadm.OffsetResponse) { out[o.Partition] = o.At })
	return out
}
