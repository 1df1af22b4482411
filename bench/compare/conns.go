package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// idleConnSteps are the points of the RSS-vs-idle-connections curve: the default run and --quick
// stop at 1,000; --full goes on to 5,000 and 10,000.
func idleConnSteps(o options) []int {
	if o.full {
		return []int{0, 1000, 5000, 10000}
	}
	return []int{0, 1000}
}

// wantNoFile is the open-file limit the run asks for: Kafka's documentation asks for 100,000 or
// more for a broker, and 10,000 partitions cost Gregor three descriptors each (the active
// segment's log and both index files) against Kafka's one.
const wantNoFile = 200_000

// raiseNoFile lifts this process's open-file limit to wantNoFile where it may raise the hard limit
// (as root), else to the hard limit, so that the client side of the idle connections and the
// brokers' 10,000 partitions fit; brokers started afterwards inherit it. It returns the soft
// limit in force.
func raiseNoFile() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, fmt.Errorf("compare: getrlimit: %w", err)
	}
	if l.Max < wantNoFile {
		raised := syscall.Rlimit{Cur: wantNoFile, Max: wantNoFile}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			return wantNoFile, nil
		}
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			return 0, fmt.Errorf("compare: setrlimit: %w", err)
		}
	}
	return l.Cur, nil
}

// apiVersionsV0 is a complete ApiVersions v0 request frame (correlation id 1, null client id).
func apiVersionsV0() []byte {
	b := make([]byte, 14)
	binary.BigEndian.PutUint32(b[0:], 10)
	binary.BigEndian.PutUint16(b[4:], 18) // ApiVersions
	binary.BigEndian.PutUint16(b[6:], 0)
	binary.BigEndian.PutUint32(b[8:], 1)
	binary.BigEndian.PutUint16(b[12:], 0xffff) // null client id
	return b
}

// openIdle opens n connections to addr and completes one ApiVersions exchange on each, so the
// broker has accepted and set every one up before its RSS is read; the connections then stay
// idle until closed.
func openIdle(addr string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, 0, n)
	req := apiVersionsV0()
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("connection %d: %w", i+1, err)
		}
		conns = append(conns, c)
		if err := exchange(c, req); err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("connection %d: %w", i+1, err)
		}
	}
	return conns, nil
}

func exchange(c net.Conn, req []byte) error {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = c.SetDeadline(time.Time{}) }()
	if _, err := c.Write(req); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 1<<20 {
		return fmt.Errorf("ApiVersions response of %d bytes", n)
	}
	_, err := io.CopyN(io.Discard, c, int64(n))
	return err
}

func closeAll(cs []net.Conn) {
	for _, c := range cs {
		_ = c.Close()
	}
}

// currentRSS is the process's resident set now (VmRSS), in MiB.
func currentRSS(pidFile string) (float64, error) {
	pid, err := readPid(pidFile)
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("compare: %w", err)
	}
	return statusKB(string(b), "VmRSS:")
}

// openFiles counts the process's open file descriptors.
func openFiles(pidFile string) (int, error) {
	pid, err := readPid(pidFile)
	if err != nil {
		return 0, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("compare: %w", err)
	}
	return len(fds), nil
}

// statusKB reads a "Name: N kB" line of /proc/PID/status, in MiB.
func statusKB(status, name string) (float64, error) {
	for _, l := range strings.Split(status, "\n") {
		if strings.HasPrefix(l, name) {
			f := strings.Fields(l)
			if len(f) < 2 {
				break
			}
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0, fmt.Errorf("compare: %s %q: %w", name, l, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("compare: no %s line", name)
}

// measureIdleConns records the broker's RSS with 0, 1,000 (and with --full 5,000 and 10,000)
// idle connections open, and the RSS each idle connection adds at the largest step.
func measureIdleConns(t target, o options, record recordFn) error {
	var conns []net.Conn
	defer func() { closeAll(conns) }()
	steps := idleConnSteps(o)
	var base float64
	for _, n := range steps {
		more, err := openIdle(t.bootstrap, n-len(conns))
		if err != nil {
			return fmt.Errorf("idle connections: %w", err)
		}
		conns = append(conns, more...)
		rss, err := currentRSS(t.pidFile)
		if err != nil {
			return err
		}
		if n == 0 {
			base = rss
		}
		fmt.Fprintf(os.Stderr, "compare: %s %d idle connections: RSS %.1f MiB\n", t.name, n, rss)
		record(t.name, fmt.Sprintf("curve: broker RSS with %d idle connections", n), "MiB", "lower", rss)
	}
	if last := steps[len(steps)-1]; last > 0 {
		rss, _ := currentRSS(t.pidFile)
		record(t.name, fmt.Sprintf("RSS per idle connection (%d open)", last), "KB", "lower", perItemKB(rss-base, last))
	}
	return nil
}

// perItemKB spreads a growth of deltaMiB over n items, in KB each.
func perItemKB(deltaMiB float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return deltaMiB * 1024 / float64(n)
}
