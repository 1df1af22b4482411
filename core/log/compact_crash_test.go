package log

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/core/record"
)

// swapFixture is a partition directory before and after a cleaning.
type swapFixture struct {
	before, after string
	// replaced are the base offsets of the segments the cleaning wrote; gone
	// are those of original segments it deleted.
	replaced, gone []int64
	wantBefore     []got
	wantAfter      []got
}

func newSwapFixture(t *testing.T) swapFixture {
	e := newEnv(t, compactConfig())
	l := e.log("t", 0)
	fillKeys(t, e, l, record.CodecZstd, 6, 10)
	fx := swapFixture{before: t.TempDir(), after: t.TempDir()}
	fx.wantBefore, _ = allRecords(t, l)
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()})
	// A second pass merges segments, so some originals disappear.
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), Force: true})
	fx.wantAfter, _ = allRecords(t, l)
	if err := e.dir.Close(); err != nil {
		t.Fatal(err)
	}
	e.dir = nil
	part := filepath.Join(e.path, "t-0")
	copyDir(t, part, fx.after)

	// Rebuild the "before" state by replaying the same writes elsewhere.
	e2 := newEnv(t, compactConfig())
	l2 := e2.log("t", 0)
	fillKeys(t, e2, l2, record.CodecZstd, 6, 10)
	if err := e2.dir.Close(); err != nil {
		t.Fatal(err)
	}
	e2.dir = nil
	copyDir(t, filepath.Join(e2.path, "t-0"), fx.before)

	for _, name := range segmentFiles(t, fx.after, logSuffix) {
		base, _ := parseBase(filepath.Base(name), logSuffix)
		a, _ := os.ReadFile(name)
		b, err := os.ReadFile(filepath.Join(fx.before, filepath.Base(name)))
		if err != nil || !bytes.Equal(a, b) {
			fx.replaced = append(fx.replaced, base)
		}
	}
	for _, name := range segmentFiles(t, fx.before, logSuffix) {
		if _, err := os.Stat(filepath.Join(fx.after, filepath.Base(name))); err != nil {
			base, _ := parseBase(filepath.Base(name), logSuffix)
			fx.gone = append(fx.gone, base)
		}
	}
	if len(fx.replaced) == 0 || len(fx.gone) == 0 {
		t.Fatalf("fixture: replaced %v, gone %v; want both", fx.replaced, fx.gone)
	}
	return fx
}

func TestCleanCrashDuringSwap(t *testing.T) {
	fx := newSwapFixture(t)
	afterFile := func(base int64, suffix string) string { return filepath.Join(fx.after, segmentName(base, suffix)) }
	tests := []struct {
		name string
		// crash arranges the partition directory dir, holding the original
		// segments, as a crash at some step of the swap left it.
		crash func(t *testing.T, dir string)
		want  func() []got
	}{
		{"cleaned files only", func(t *testing.T, dir string) {
			for _, b := range fx.replaced {
				for _, suf := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
					copyFile(t, afterFile(b, suf), filepath.Join(dir, segmentName(b, suf)+cleanedSuffix))
				}
			}
		}, func() []got { return fx.wantBefore }},
		{"swap files, originals present", func(t *testing.T, dir string) {
			for _, b := range fx.replaced {
				for _, suf := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
					copyFile(t, afterFile(b, suf), filepath.Join(dir, segmentName(b, suf)+swapSuffix))
				}
			}
		}, func() []got { return fx.wantAfter }},
		{"swap log, originals partly deleted", func(t *testing.T, dir string) {
			for _, b := range fx.replaced {
				copyFile(t, afterFile(b, logSuffix), filepath.Join(dir, segmentName(b, logSuffix)+swapSuffix))
			}
			for _, b := range fx.gone[:1] {
				for _, suf := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
					os.Remove(filepath.Join(dir, segmentName(b, suf)))
				}
			}
		}, func() []got { return fx.wantAfter }},
		{"indexes renamed, log still a swap", func(t *testing.T, dir string) {
			for _, b := range fx.replaced {
				copyFile(t, afterFile(b, logSuffix), filepath.Join(dir, segmentName(b, logSuffix)+swapSuffix))
				for _, suf := range []string{indexSuffix, timeIndexSuffix} {
					copyFile(t, afterFile(b, suf), filepath.Join(dir, segmentName(b, suf)))
				}
			}
			for _, b := range fx.gone {
				for _, suf := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
					os.Remove(filepath.Join(dir, segmentName(b, suf)))
				}
			}
		}, func() []got { return fx.wantAfter }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{t: t, path: t.TempDir(), clock: newClock(), warns: &warnRecorder{}, cfg: compactConfig()}
			dir := filepath.Join(e.path, "t-0")
			copyDir(t, fx.before, dir)
			tc.crash(t, dir)
			e.open() // no clean shutdown marker: a crash
			t.Cleanup(func() { e.dir.closeLogs() })
			l, ok := e.dir.Log("t", 0)
			if !ok {
				t.Fatal("log not opened")
			}
			rs, _ := allRecords(t, l)
			if want := tc.want(); !reflect.DeepEqual(rs, want) {
				t.Fatalf("read %d records, want %d:\n%v\n%v", len(rs), len(want), rs, want)
			}
			left, _ := os.ReadDir(dir)
			for _, f := range left {
				if strings.HasSuffix(f.Name(), swapSuffix) || strings.HasSuffix(f.Name(), cleanedSuffix) {
					t.Fatalf("leftover %s", f.Name())
				}
			}
			// The log stays writable and cleanable.
			mustAppend(t, l, keyedBatch(t, keyedSpec{}, k("k1", "z")))
			mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), Force: true})
		})
	}
}
