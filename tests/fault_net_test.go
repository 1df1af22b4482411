package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// faultNet stands between the nodes of a childCluster: every node's Kafka
// and controller listener is reached through a proxy of its own, and the
// proxy knows which node opened each connection (it looks the dialling
// socket up in /proc), so the link between two nodes can be cut in both
// directions while clients keep reaching every node.
//
// A cut link either drops (open connections are closed, new ones refused:
// the peer sees a reset) or blackholes (bytes are swallowed and new
// connections are held without an answer: the peer sees only timeouts).
// Healing a blackholed link closes what was held, since bytes were lost.
type faultNet struct {
	t     testing.TB
	mu    sync.Mutex
	cut   map[[2]int32]cutMode // unordered pair of node ids, smaller first
	pids  map[int]int32        // live process id -> node id
	conns map[*proxyConn]struct{}
	lns   []net.Listener
	wg    sync.WaitGroup
	known int // connections identified as a node's
}

type cutMode int

const (
	cutDrop cutMode = iota + 1
	cutBlackhole
)

func (m cutMode) String() string {
	if m == cutBlackhole {
		return "blackhole"
	}
	return "drop"
}

// proxyConn is one forwarded connection; from is 0 for a client.
type proxyConn struct {
	from, to int32
	in, out  net.Conn // out is nil while held by a blackhole
	dead     bool     // bytes are swallowed (guarded by faultNet.mu)
	once     sync.Once
}

func (pc *proxyConn) close() {
	pc.once.Do(func() {
		pc.in.Close()
		if pc.out != nil {
			pc.out.Close()
		}
	})
}

func newFaultNet(t testing.TB) *faultNet {
	n := &faultNet{t: t, cut: map[[2]int32]cutMode{}, pids: map[int]int32{}, conns: map[*proxyConn]struct{}{}}
	t.Cleanup(n.close)
	return n
}

func pairOf(a, b int32) [2]int32 {
	if a > b {
		a, b = b, a
	}
	return [2]int32{a, b}
}

// listen starts a proxy to target for node to and returns its address.
func (n *faultNet) listen(to int32, target string) string {
	n.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		n.t.Fatal(err)
	}
	n.mu.Lock()
	n.lns = append(n.lns, ln)
	n.mu.Unlock()
	port := ln.Addr().(*net.TCPAddr).Port
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.wg.Add(1)
			go func() { defer n.wg.Done(); n.serve(c, to, port, target) }()
		}
	}()
	return ln.Addr().String()
}

// setNode records the process of a started node; pid 0 forgets the node.
func (n *faultNet) setNode(id int32, pid int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for p, nid := range n.pids {
		if nid == id {
			delete(n.pids, p)
		}
	}
	if pid > 0 {
		n.pids[pid] = id
	}
}

func (n *faultNet) serve(in net.Conn, to int32, port int, target string) {
	from := n.identify(in.RemoteAddr().(*net.TCPAddr).Port, port)
	pc := &proxyConn{from: from, to: to, in: in}
	n.mu.Lock()
	if from != 0 {
		n.known++
	}
	mode := n.cut[pairOf(from, to)]
	if from == 0 || from == to {
		mode = 0
	}
	if mode == cutDrop {
		n.mu.Unlock()
		in.Close()
		return
	}
	pc.dead = mode == cutBlackhole
	n.conns[pc] = struct{}{}
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.conns, pc)
		n.mu.Unlock()
		pc.close()
	}()
	if pc.dead {
		// Held without an answer until the link heals, then closed.
		_, _ = io.Copy(io.Discard, in)
		return
	}
	out, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	n.mu.Lock()
	pc.out = out
	dead := pc.dead
	n.mu.Unlock()
	if dead {
		return
	}
	done := make(chan struct{}, 2)
	go func() { n.pump(pc, out, in); done <- struct{}{} }()
	go func() { n.pump(pc, in, out); done <- struct{}{} }()
	<-done
	pc.close()
	<-done
}

// pump copies src to dst until either side closes; bytes read while the
// connection is dead are dropped.
func (n *faultNet) pump(pc *proxyConn, dst, src net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			n.mu.Lock()
			dead := pc.dead
			n.mu.Unlock()
			if !dead {
				if _, werr := dst.Write(buf[:k]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// nodeConns counts the connections so far that a node opened.
func (n *faultNet) nodeConns() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.known
}

// cutLink cuts the link between nodes a and b.
func (n *faultNet) cutLink(a, b int32, mode cutMode) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := pairOf(a, b)
	n.cut[p] = mode
	for pc := range n.conns {
		if pc.from == 0 || pairOf(pc.from, pc.to) != p {
			continue
		}
		if mode == cutDrop {
			go pc.close()
		} else {
			pc.dead = true
		}
	}
}

// heal restores every cut link; connections that lost bytes are closed.
func (n *faultNet) heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.cut)
	for pc := range n.conns {
		if pc.dead {
			go pc.close()
		}
	}
}

func (n *faultNet) close() {
	n.mu.Lock()
	for _, ln := range n.lns {
		ln.Close()
	}
	for pc := range n.conns {
		pc.close()
	}
	n.mu.Unlock()
	n.wg.Wait()
}

// identify finds which node's process holds the dialling end of a
// connection from 127.0.0.1:peerPort to the proxy's port: 0 when it is not
// a node (the test's own clients) or cannot be told.
func (n *faultNet) identify(peerPort, proxyPort int) int32 {
	inode := socketInode(peerPort, proxyPort)
	if inode == "" {
		return 0
	}
	n.mu.Lock()
	pids := make(map[int]int32, len(n.pids))
	for p, id := range n.pids {
		pids[p] = id
	}
	n.mu.Unlock()
	want := "socket:[" + inode + "]"
	for pid, id := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && l == want {
				return id
			}
		}
	}
	return 0
}

// socketInode returns the inode of the IPv4 socket whose local port is
// local and remote port is remote, from /proc/net/tcp.
func socketInode(local, remote int) string {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 {
			continue
		}
		if portOf(fs[1]) == local && portOf(fs[2]) == remote {
			return fs[9]
		}
	}
	return ""
}

// portOf reads the port of "0100007F:D431".
func portOf(hexAddr string) int {
	_, p, ok := strings.Cut(hexAddr, ":")
	if !ok {
		return -1
	}
	v, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return -1
	}
	return int(v)
}
