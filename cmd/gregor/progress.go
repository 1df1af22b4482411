package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A progress display for long work (bench cases, mirror catch-up, large
// consumes). On a terminal it redraws one line in place; elsewhere it
// writes a plain line per report, or nothing, as the command chooses.

const (
	progressBarWidth = 30
	// progressTTYInterval is how often a terminal line is redrawn.
	progressTTYInterval = 200 * time.Millisecond
)

// isTerminal reports whether w is a character device such as a terminal.
// Anything that is not an *os.File (a buffer, a pipe wrapper) is not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}

// progress renders the advance of one piece of work. It is not safe for
// concurrent use: one goroutine (see progressLoop) draws it.
type progress struct {
	w     io.Writer
	tty   bool
	label string
	unit  string // what is counted, plural: "records"
	now   func() time.Time
	start time.Time
	// drawn is the width of the last line drawn on a terminal, so a
	// shorter line can blank its tail.
	drawn int
}

func newProgress(w io.Writer, tty bool, label, unit string, now func() time.Time) *progress {
	if now == nil {
		now = time.Now
	}
	return &progress{w: w, tty: tty, label: label, unit: unit, now: now, start: now()}
}

// line formats the state: done of total (total <= 0: unknown), the rate
// since start and an optional note. A terminal line gets a bar.
func (p *progress) line(done, total int64, note string) string {
	var b strings.Builder
	b.WriteString(p.label)
	if total > 0 {
		if done > total {
			done = total
		}
		if p.tty {
			filled := int(done * progressBarWidth / total)
			b.WriteString(" [")
			b.WriteString(strings.Repeat("=", filled))
			if filled < progressBarWidth {
				b.WriteByte('>')
				b.WriteString(strings.Repeat(" ", progressBarWidth-filled-1))
			}
			b.WriteByte(']')
		}
		fmt.Fprintf(&b, " %3d%% %d/%d %s", done*100/total, done, total, p.unit)
	} else {
		fmt.Fprintf(&b, " %d %s", done, p.unit)
	}
	if el := p.now().Sub(p.start); el > 0 {
		fmt.Fprintf(&b, ", %.0f %s/s", float64(done)/el.Seconds(), p.unit)
	}
	if note != "" {
		b.WriteString(", ")
		b.WriteString(note)
	}
	return b.String()
}

// update draws the state: in place on a terminal, as a new line elsewhere.
func (p *progress) update(done, total int64, note string) {
	s := p.line(done, total, note)
	if !p.tty {
		fmt.Fprintln(p.w, s)
		return
	}
	pad := ""
	if n := p.drawn - len(s); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.drawn = len(s)
	fmt.Fprintf(p.w, "\r%s%s", s, pad)
}

// clear removes a terminal line so that what follows starts clean.
func (p *progress) clear() {
	if p.tty && p.drawn > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.drawn))
		p.drawn = 0
	}
}

// counter is a count that work advances and a progress loop reads.
type counter struct{ n atomic.Int64 }

func (c *counter) add(n int64) { c.n.Add(n) }
func (c *counter) load() int64 { return c.n.Load() }

// progressLoop redraws p from count on every tick until stop is closed,
// then clears the line; done is closed when it has returned. The ticks are
// a parameter so tests drive the loop without waiting.
func progressLoop(p *progress, ticks <-chan time.Time, stop <-chan struct{}, done chan<- struct{}, total int64, count *counter) {
	defer close(done)
	for {
		select {
		case <-stop:
			p.clear()
			return
		case <-ticks:
			p.update(count.load(), total, "")
		}
	}
}

// startProgress shows count advancing towards total (0: unknown) on w while
// w is a terminal, and does nothing elsewhere. The returned stop ends the
// display and clears its line before returning; calling it again does
// nothing.
func startProgress(w io.Writer, label, unit string, total int64, count *counter) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	t := time.NewTicker(progressTTYInterval)
	stopC, done := make(chan struct{}), make(chan struct{})
	go progressLoop(newProgress(w, true, label, unit, nil), t.C, stopC, done, total, count)
	var once sync.Once
	return func() {
		once.Do(func() {
			t.Stop()
			close(stopC)
			<-done
		})
	}
}
