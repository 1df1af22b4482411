package errorfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestParseRules(t *testing.T) {
	rules, err := ParseRules("# disk faults\nsync EIO times=1\nwrite|truncate ENOSPC partial path=.log after=2; create EROFS")
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Ops: OpSync, Err: syscall.EIO, Times: 1},
		{Ops: OpWrite | OpTruncate, Err: syscall.ENOSPC, Partial: true, Path: ".log", After: 2},
		{Ops: OpCreate, Err: syscall.EROFS},
	}
	if len(rules) != len(want) {
		t.Fatalf("got %d rules, want %d", len(rules), len(want))
	}
	for i := range want {
		if rules[i] != want[i] {
			t.Errorf("rule %d: %+v, want %+v", i, rules[i], want[i])
		}
	}
	for _, bad := range []string{"sync", "fsync EIO", "sync EBADF", "sync EIO times=-1", "sync EIO colour=red"} {
		if _, err := ParseRules(bad); err == nil {
			t.Errorf("ParseRules(%q) accepted", bad)
		}
	}
}

func TestInjection(t *testing.T) {
	fsys := New(nil)
	p := filepath.Join(t.TempDir(), "f.log")
	f, err := fsys.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fsys.Set("write ENOSPC partial after=1\nsync EIO times=1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("good"), 0); err != nil {
		t.Fatalf("first write (after=1): %v", err)
	}
	n, err := f.WriteAt([]byte("torn"), 4)
	if !errors.Is(err, syscall.ENOSPC) || n != 2 {
		t.Fatalf("short write: %d, %v; want 2 bytes and ENOSPC", n, err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync: %v, want EIO", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("second sync (times=1): %v", err)
	}
	if got := fsys.Injected(); got != 2 {
		t.Fatalf("Injected() = %d, want 2", got)
	}
	if b, _ := os.ReadFile(p); string(b) != "goodto" {
		t.Fatalf("file holds %q, want %q", b, "goodto")
	}
	fsys.Clear()
	if _, err := f.WriteAt([]byte("ok"), 6); err != nil {
		t.Fatalf("write after Clear: %v", err)
	}
}
