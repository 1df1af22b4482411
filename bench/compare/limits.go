package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// limits are the machine's physical ceilings, measured in the same run as the brokers so that
// a ratio can be read against what the hardware allows: one loopback TCP stream, and
// sequential writes to the disk the brokers' data lives on, with and without an fsync.
type limits struct {
	LoopbackMBps  float64 `json:"loopback_tcp_one_stream_mb_s"`
	WriteMBps     float64 `json:"sequential_write_mb_s"`
	WriteSyncMBps float64 `json:"sequential_write_fsync_each_mib_mb_s"`
}

// measureLimits runs the three measurements passes times each and keeps the best of each: a
// ceiling is what the machine can do, and a moment of other load only hides it. The byte
// count scales with the run.
func measureLimits(dir string, scale float64, passes int) (limits, error) {
	n := int64(max(128<<20, int(float64(1<<30)*scale)))
	var l limits
	for range passes {
		lo, err := loopbackMBps(n)
		if err != nil {
			return l, err
		}
		w, err := writeMBps(dir, n, false)
		if err != nil {
			return l, err
		}
		ws, err := writeMBps(dir, min(n, 256<<20), true)
		if err != nil {
			return l, err
		}
		l.LoopbackMBps, l.WriteMBps, l.WriteSyncMBps = max(l.LoopbackMBps, lo), max(l.WriteMBps, w), max(l.WriteSyncMBps, ws)
	}
	return l, nil
}

// loopbackMBps sends n bytes over one loopback TCP connection in 1 MiB writes.
func loopbackMBps(n int64) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("compare: limits: %w", err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_, err = io.CopyN(io.Discard, c, n)
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, fmt.Errorf("compare: limits: %w", err)
	}
	defer c.Close()
	buf := make([]byte, 1<<20)
	start := time.Now()
	for sent := int64(0); sent < n; sent += int64(len(buf)) {
		if _, err := c.Write(buf); err != nil {
			return 0, fmt.Errorf("compare: limits: loopback write: %w", err)
		}
	}
	if err := <-done; err != nil {
		return 0, fmt.Errorf("compare: limits: loopback read: %w", err)
	}
	return float64(n) / time.Since(start).Seconds() / (1 << 20), nil
}

// writeMBps writes n bytes sequentially to a new file in dir in 1 MiB writes, with an fsync
// after each write when sync is set, and one at the end otherwise (the data is on disk when
// the clock stops either way only with sync; without it the figure is the page cache's).
func writeMBps(dir string, n int64, sync bool) (float64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("compare: limits: %w", err)
	}
	f, err := os.CreateTemp(dir, "bench-limit-*.dat")
	if err != nil {
		return 0, fmt.Errorf("compare: limits: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	start := time.Now()
	for w := int64(0); w < n; w += int64(len(buf)) {
		if _, err := f.Write(buf); err != nil {
			return 0, fmt.Errorf("compare: limits: write %s: %w", f.Name(), err)
		}
		if sync {
			if err := f.Sync(); err != nil {
				return 0, fmt.Errorf("compare: limits: fsync %s: %w", f.Name(), err)
			}
		}
	}
	return float64(n) / time.Since(start).Seconds() / (1 << 20), nil
}

// limitFor is the ceiling a throughput row can be read against: a consume row moves bytes
// over loopback; a produce row over loopback onto the disk, through an fsync under fsync
// durability.
func (l limits) limitFor(metric, unit, durability string) float64 {
	if unit != "MB/s" {
		return 0
	}
	m := strings.ToLower(metric)
	if strings.Contains(m, "consume") || strings.Contains(m, "fetch") {
		return l.LoopbackMBps
	}
	disk := l.WriteMBps
	if durability == "fsync" {
		disk = l.WriteSyncMBps
	}
	return min(l.LoopbackMBps, disk)
}

// limitsDir is where the write measurements run: beside the brokers' data.
func limitsDir() string {
	if c := os.Getenv("GREGOR_CACHE"); c != "" {
		return filepath.Join(c, "bench-limits")
	}
	return filepath.Join(".cache", "bench-limits")
}
