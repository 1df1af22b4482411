package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/mirror"
)

// fakeClock returns the times it is set to.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestProgressLine(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		tty     bool
		done    int64
		total   int64
		elapsed time.Duration
		note    string
		want    string
	}{
		{name: "bar start", tty: true, done: 0, total: 100, want: "work [>                             ]   0% 0/100 records"},
		{name: "bar half with rate", tty: true, done: 50, total: 100, elapsed: 2 * time.Second,
			want: "work [===============>              ]  50% 50/100 records, 25 records/s"},
		{name: "bar full", tty: true, done: 100, total: 100, elapsed: time.Second,
			want: "work [==============================] 100% 100/100 records, 100 records/s"},
		{name: "bar clamps overshoot", tty: true, done: 120, total: 100,
			want: "work [==============================] 100% 100/100 records"},
		{name: "plain has no bar", tty: false, done: 30, total: 120, elapsed: 3 * time.Second,
			want: "work  25% 30/120 records, 10 records/s"},
		{name: "unknown total", tty: true, done: 7, elapsed: time.Second, want: "work 7 records, 7 records/s"},
		{name: "note", tty: true, done: 1, total: 2, note: "lag 1",
			want: "work [===============>              ]  50% 1/2 records, lag 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{t0}
			p := newProgress(&bytes.Buffer{}, tt.tty, "work", "records", c.now)
			c.t = t0.Add(tt.elapsed)
			if got := p.line(tt.done, tt.total, tt.note); got != tt.want {
				t.Errorf("line:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestProgressUpdate(t *testing.T) {
	var tty, plain bytes.Buffer
	c := &fakeClock{time.Unix(0, 0)}
	pt := newProgress(&tty, true, "w", "records", c.now)
	pp := newProgress(&plain, false, "w", "records", c.now)
	for _, n := range []int64{100, 5} {
		pt.update(n, 0, "")
		pp.update(n, 0, "")
	}
	pt.clear()
	// A terminal line is redrawn in place, a shorter one blanks the
	// longer one's tail, and clear leaves an empty line.
	if want := "\rw 100 records\rw 5 records  \r           \r"; tty.String() != want {
		t.Errorf("terminal: %q, want %q", tty.String(), want)
	}
	if want := "w 100 records\nw 5 records\n"; plain.String() != want {
		t.Errorf("plain: %q, want %q", plain.String(), want)
	}
}

func TestProgressLoop(t *testing.T) {
	var out bytes.Buffer
	c := &fakeClock{time.Unix(0, 0)}
	p := newProgress(&out, true, "w", "records", c.now)
	ticks := make(chan time.Time)
	stop, done := make(chan struct{}), make(chan struct{})
	var n counter
	go progressLoop(p, ticks, stop, done, 4, &n)
	n.add(2)
	ticks <- time.Time{} // unbuffered: the loop has taken it
	n.add(2)
	ticks <- time.Time{}
	close(stop)
	<-done
	s := out.String()
	for _, want := range []string{" 50% 2/4 records", "100% 4/4 records"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q: %q", want, s)
		}
	}
	if !strings.HasSuffix(s, "\r") {
		t.Errorf("the line was not cleared: %q", s)
	}
}

func TestStartProgressOffTerminal(t *testing.T) {
	// Neither a buffer nor a regular file is a terminal: nothing is drawn,
	// and stop may be called twice.
	f, err := os.Create(filepath.Join(t.TempDir(), "err"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	var n counter
	for _, w := range []interface {
		Write([]byte) (int, error)
	}{&buf, f} {
		if isTerminal(w) {
			t.Fatalf("%T is a terminal", w)
		}
		stop := startProgress(w, "w", "records", 10, &n)
		stop()
		stop()
	}
	if fi, _ := f.Stat(); fi.Size() != 0 || buf.Len() != 0 {
		t.Errorf("wrote progress off a terminal")
	}
}

func TestMirrorProgress(t *testing.T) {
	st := func(records, lag int64) mirror.Status {
		return mirror.Status{Name: "east->west", Partitions: []mirror.PartitionStatus{
			{Topic: "orders", Records: records, Lag: lag, State: mirror.StateMirroring}}}
	}
	snaps := []mirror.Status{st(0, 100), st(40, 60), st(100, 0), st(100, 0)}

	var plain bytes.Buffer
	mp := newMirrorProgress(&plain, false, nil)
	for _, s := range snaps {
		mp.report(s, time.Second)
	}
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	// The last snapshot repeats a caught-up state and prints nothing.
	if len(lines) != 3 || !strings.HasSuffix(lines[1], "lag 60, 40 records/s") || !strings.HasSuffix(lines[2], "lag 0, 60 records/s") {
		t.Errorf("plain lines: %q", lines)
	}

	var tty bytes.Buffer
	c := &fakeClock{time.Unix(0, 0)}
	mp = newMirrorProgress(&tty, true, c.now)
	for _, s := range snaps {
		c.t = c.t.Add(time.Second)
		mp.report(s, 200*time.Millisecond)
	}
	mp.end()
	s := tty.String()
	for _, want := range []string{"mirror east->west [", "  40% 40/100 records", "100% 100/100 records", "lag 0"} {
		if !strings.Contains(s, want) {
			t.Errorf("terminal output lacks %q: %q", want, s)
		}
	}
	if strings.Count(s, "\r") != 3 || !strings.HasSuffix(s, "\n") {
		t.Errorf("want 3 redraws and a final newline: %q", s)
	}
}
