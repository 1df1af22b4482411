package log

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHighWatermarkCheckpoint(t *testing.T) {
	type want struct {
		topic     string
		partition int32
		hw        int64
		ok        bool
	}
	tests := []struct {
		name string
		// set records high watermarks before the checkpoint; a negative
		// value forgets one.
		set map[string]int64
		// after is how the dir is left and opened again.
		after string
		file  string
		want  []want
	}{
		{
			name:  "periodic write survives a crash",
			set:   map[string]int64{"orders-0": 7, "orders-1": 3},
			after: "crash",
			file:  "0\n2\norders 0 7\norders 1 3\n",
			want:  []want{{"orders", 0, 7, true}, {"orders", 1, 3, true}, {"audit", 0, 0, false}},
		},
		{
			name:  "clean close writes the latest",
			set:   map[string]int64{"orders-0": 10, "audit-0": 0},
			after: "close",
			file:  "0\n2\naudit 0 0\norders 0 10\n",
			want:  []want{{"audit", 0, 0, true}, {"orders", 0, 10, true}, {"orders", 1, 0, false}},
		},
		{
			name:  "a forgotten high watermark is left out",
			set:   map[string]int64{"orders-0": 4, "orders-1": -5},
			after: "crash",
			file:  "0\n1\norders 0 4\n",
			want:  []want{{"orders", 0, 4, true}, {"orders", 1, 0, false}},
		},
		{
			name:  "no partition recorded one",
			after: "close",
			file:  "0\n0\n",
			want:  []want{{"orders", 0, 0, false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tinyConfig())
			logs := map[string]*Log{"orders-0": e.log("orders", 0), "orders-1": e.log("orders", 1), "audit-0": e.log("audit", 0)}
			fill(t, logs["orders-0"], 12, 1)
			fill(t, logs["orders-1"], 3, 1)
			for name, hw := range tt.set {
				logs[name].SetHighWatermark(hw)
			}
			if err := e.dir.CheckpointHighWatermarks(); err != nil {
				t.Fatal(err)
			}
			switch tt.after {
			case "crash":
				// A move after the periodic write is lost with the crash.
				logs["orders-0"].SetHighWatermark(11)
				e.crash()
			case "close":
				e.reopen()
			}
			b, err := os.ReadFile(filepath.Join(e.path, replicationOffsetFile))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.file {
				t.Fatalf("replication-offset-checkpoint = %q, want %q", b, tt.file)
			}
			for _, w := range tt.want {
				l, ok := e.dir.Log(w.topic, w.partition)
				if !ok {
					t.Fatalf("%s-%d not reopened", w.topic, w.partition)
				}
				hw, ok := l.HighWatermark()
				if ok != w.ok || ok && hw != w.hw {
					t.Fatalf("%s-%d high watermark = %d, %v; want %d, %v", w.topic, w.partition, hw, ok, w.hw, w.ok)
				}
			}
		})
	}
}

// A damaged replication-offset-checkpoint is reported and treated as absent:
// no partition gets a high watermark from it, which keeps replicas from
// exposing anything they cannot prove committed.
func TestHighWatermarkCheckpointCorrupt(t *testing.T) {
	for _, body := range []string{"", "0\n2\norders 0 5\n", "0\n1\norders 0 -3\n", "7\n0\n"} {
		e := newEnv(t, tinyConfig())
		l := e.log("orders", 0)
		fill(t, l, 5, 1)
		l.SetHighWatermark(5)
		e.dir.closeLogs()
		e.dir = nil
		if err := os.WriteFile(filepath.Join(e.path, replicationOffsetFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		e.open()
		l, _ = e.dir.Log("orders", 0)
		if hw, ok := l.HighWatermark(); ok {
			t.Fatalf("body %q: high watermark %d from a damaged checkpoint", body, hw)
		}
		warned := false
		for _, w := range e.warns.take() {
			warned = warned || strings.Contains(w, replicationOffsetFile)
		}
		if !warned {
			t.Fatalf("body %q: no warning names %s", body, replicationOffsetFile)
		}
	}
}

// A log deleted and created again starts without a high watermark.
func TestHighWatermarkForgottenOnDelete(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("orders", 0)
	fill(t, l, 4, 1)
	l.SetHighWatermark(4)
	if err := e.dir.Delete("orders", 0); err != nil {
		t.Fatal(err)
	}
	l = e.log("orders", 0)
	if hw, ok := l.HighWatermark(); ok {
		t.Fatalf("recreated log has high watermark %d", hw)
	}
	if err := e.dir.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(e.path, replicationOffsetFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "0\n0\n" {
		t.Fatalf("replication-offset-checkpoint = %q after delete", b)
	}
}
