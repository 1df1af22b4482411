package log

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/core/record"
)

// recoveryFixture is a log of 40 batches of 2 records over several segments,
// synced and checkpointed up to batch 20 (offset 40).
func recoveryFixture(t *testing.T) (*env, string, []int64) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	fill(t, l, 20, 2)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := e.dir.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	fill(t, l, 20, 2)
	var bases []int64
	for _, s := range l.Segments() {
		bases = append(bases, s.BaseOffset)
	}
	e.warns.take()
	return e, filepath.Join(e.path, "t-0"), bases
}

func segPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, segmentName(base, suffix))
}

func TestRecovery(t *testing.T) {
	tests := []struct {
		name string
		// damage edits the files after the log was dropped; it returns the
		// log end offset expected after recovery.
		damage    func(t *testing.T, dir string, bases []int64) int64
		clean     bool   // reopen as after a clean shutdown
		wantWarn  string // a warning that must be logged ("" = none at all)
		wantTrunc bool   // later segments must be gone
	}{
		{
			name:   "crash without damage",
			damage: func(*testing.T, string, []int64) int64 { return 80 },
		},
		{
			name: "torn tail",
			damage: func(t *testing.T, dir string, bases []int64) int64 {
				last := bases[len(bases)-1]
				p := segPath(dir, last, logSuffix)
				if err := os.Truncate(p, fileSize(t, p)-7); err != nil {
					t.Fatal(err)
				}
				return 78
			},
			wantWarn: "truncating invalid data",
		},
		{
			name: "garbage appended",
			damage: func(t *testing.T, dir string, bases []int64) int64 {
				f, err := os.OpenFile(segPath(dir, bases[len(bases)-1], logSuffix), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.Write([]byte(strings.Repeat("garbage!", 40))); err != nil {
					t.Fatal(err)
				}
				return 80
			},
			wantWarn: "truncating invalid data",
		},
		{
			name: "crc flip in a middle segment",
			damage: func(t *testing.T, dir string, bases []int64) int64 {
				// The segment after the recovery point's: flip a byte of its
				// second batch.
				var target int64
				for _, b := range bases {
					if b > 40 {
						target = b
						break
					}
				}
				p := segPath(dir, target, logSuffix)
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				h, err := record.ParseHeader(data)
				if err != nil {
					t.Fatal(err)
				}
				data[h.Size()+record.HeaderSize+3] ^= 0x40
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
				return h.NextOffset()
			},
			wantWarn:  "truncating invalid data",
			wantTrunc: true,
		},
		{
			name: "corrupt index after clean shutdown",
			damage: func(t *testing.T, dir string, bases []int64) int64 {
				if err := os.WriteFile(segPath(dir, bases[1], indexSuffix), []byte("0123456789abcdef"), 0o644); err != nil {
					t.Fatal(err)
				}
				return 80
			},
			clean:    true,
			wantWarn: "rebuilding index",
		},
		{
			name: "index with a partial entry after clean shutdown",
			damage: func(t *testing.T, dir string, bases []int64) int64 {
				if err := os.WriteFile(segPath(dir, bases[0], timeIndexSuffix), []byte{1, 2, 3}, 0o644); err != nil {
					t.Fatal(err)
				}
				return 80
			},
			clean:    true,
			wantWarn: "rebuilding index",
		},
		{
			name: "missing indexes after clean shutdown",
			damage: func(t *testing.T, dir string, bases []int64) int64 {
				for _, b := range bases {
					os.Remove(segPath(dir, b, indexSuffix))
					os.Remove(segPath(dir, b, timeIndexSuffix))
				}
				return 80
			},
			clean:    true,
			wantWarn: "rebuilding index",
		},
		{
			name: "torn tail after clean shutdown",
			damage: func(t *testing.T, dir string, bases []int64) int64 {
				last := bases[len(bases)-1]
				p := segPath(dir, last, logSuffix)
				if err := os.Truncate(p, fileSize(t, p)-1); err != nil {
					t.Fatal(err)
				}
				return 78
			},
			clean:    true,
			wantWarn: "truncating invalid data",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, dir, bases := recoveryFixture(t)
			if tt.clean {
				if err := e.dir.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				e.dir.closeLogs()
			}
			e.dir = nil
			wantLEO := tt.damage(t, dir, bases)
			e.open()
			warns := strings.Join(e.warns.take(), "\n")
			if tt.wantWarn != "" && !strings.Contains(warns, tt.wantWarn) {
				t.Fatalf("warnings %q lack %q", warns, tt.wantWarn)
			}
			if tt.wantWarn == "" && strings.Contains(warns, "truncat") {
				t.Fatalf("unexpected repair: %s", warns)
			}
			l, ok := e.dir.Log("t", 0)
			if !ok {
				t.Fatal("log missing after reopen")
			}
			if l.LogEndOffset() != wantLEO {
				t.Fatalf("LogEndOffset %d, want %d", l.LogEndOffset(), wantLEO)
			}
			hs := readAll(t, l, 0)
			if len(hs) == 0 || hs[len(hs)-1].NextOffset() != wantLEO {
				t.Fatalf("read %d batches ending at %v", len(hs), hs)
			}
			if tt.wantTrunc {
				for _, s := range l.Segments() {
					if s.BaseOffset > wantLEO {
						t.Fatalf("segment %d survived past the truncation at %d", s.BaseOffset, wantLEO)
					}
				}
			}
			// Appends continue at the recovered end, and the repaired log
			// reopens cleanly without further repairs.
			if off := mustAppend(t, l, makeBatch(t, batchSpec{ts: 1})); off != wantLEO {
				t.Fatalf("append after recovery at %d, want %d", off, wantLEO)
			}
			e.reopen()
			if w := e.warns.take(); len(w) != 0 {
				t.Fatalf("second reopen repaired again: %v", w)
			}
			l, _ = e.dir.Log("t", 0)
			if n := len(readAll(t, l, 0)); n != len(hs)+1 {
				t.Fatalf("read %d batches after reopen, want %d", n, len(hs)+1)
			}
		})
	}
}

// TestRecoverySkipsFlushedSegments checks that recovery starts at the segment
// holding the recovery point: damage before it is not scanned for after a
// crash (as in Kafka), while the index checks still run.
func TestRecoverySkipsFlushedSegments(t *testing.T) {
	e, dir, bases := recoveryFixture(t)
	e.dir.closeLogs()
	e.dir = nil
	// Flip a payload byte in the first segment, below the recovery point.
	p := segPath(dir, bases[0], logSuffix)
	data, _ := os.ReadFile(p)
	data[len(data)-3] ^= 1
	os.WriteFile(p, data, 0o644)
	e.open()
	l, _ := e.dir.Log("t", 0)
	if l.LogEndOffset() != 80 {
		t.Fatalf("LogEndOffset %d, want 80", l.LogEndOffset())
	}
}

func TestIndexDamageFoundLazily(t *testing.T) {
	cfg := tinyConfig()
	cfg.SegmentBytes = 100 << 10
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	fill(t, l, 40, 2)
	l.mu.Lock()
	if err := l.roll(); err != nil { // make the first segment inactive
		t.Fatal(err)
	}
	l.mu.Unlock()
	dir, bases := filepath.Join(e.path, "t-0"), []int64{0}
	if err := e.dir.Close(); err != nil {
		t.Fatal(err)
	}
	e.dir = nil
	// Swap two entries in the middle: the quick check of first and last
	// entries passes, the full check on first use does not.
	p := segPath(dir, bases[0], indexSuffix)
	idx, _ := os.ReadFile(p)
	if len(idx) < 24 {
		t.Fatalf("fixture index too small: %d bytes", len(idx))
	}
	bad := append([]byte(nil), idx...)
	copy(bad[8:16], idx[0:8])
	os.WriteFile(p, bad, 0o644)
	e.open()
	if w := e.warns.take(); len(w) != 0 {
		t.Fatalf("open warned before use: %v", w)
	}
	l, _ = e.dir.Log("t", 0)
	if n := len(readAll(t, l, 0)); n != 40 {
		t.Fatalf("read %d batches, want 40", n)
	}
	if w := strings.Join(e.warns.take(), "\n"); !strings.Contains(w, "rebuilding index") {
		t.Fatalf("no rebuild warning: %q", w)
	}
	if got, _ := os.ReadFile(p); string(got) != string(idx) {
		t.Fatalf("rebuilt index differs from the original")
	}
}

func TestLeftoverFiles(t *testing.T) {
	e, dir, bases := recoveryFixture(t)
	if err := e.dir.Close(); err != nil {
		t.Fatal(err)
	}
	e.dir = nil
	for name, data := range map[string]string{
		"00000000000000099999.index":       "orphan index",
		"00000000000000000000.log.deleted": "x",
		"junk.txt":                         "hello",
		"abc.log":                          "not a segment",
		"00000000000000000000.swap":        "",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
	}
	os.Mkdir(filepath.Join(dir, "subdir"), 0o755)
	e.open()
	l, _ := e.dir.Log("t", 0)
	if n := len(readAll(t, l, 0)); n != 40 {
		t.Fatalf("read %d batches, want 40", n)
	}
	for _, gone := range []string{"00000000000000099999.index", "00000000000000000000.log.deleted"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); err == nil {
			t.Fatalf("%s was not removed", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "junk.txt")); err != nil {
		t.Fatalf("unknown file was touched: %v", err)
	}
	_ = bases
}
