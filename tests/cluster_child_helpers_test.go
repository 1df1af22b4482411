package tests

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// childCluster is a multi-node Gregor cluster of "gregor serve" child
// processes on loopback: every node is a controller voter and a broker, so
// a node can be SIGKILLed, SIGSTOPped and restarted on its data directory.
type childCluster struct {
	t     testing.TB
	nodes map[int32]*childNode
	net   *faultNet // nil unless the nodes talk through proxies
}

// childNode is one node of a childCluster; proc is nil while it is down.
type childNode struct {
	id      int32
	addr    string
	cfgPath string
	dataDir string
	// rules is the errorfs rules file of a node started from the errorfs
	// build (GREGOR_ERRORFS_RULES); "" for the ordinary build.
	rules  string
	proc   *childBroker
	paused bool
}

// startChildCluster writes a config per node (short broker sessions and
// replica lag so that failover happens within seconds), starts n nodes and
// waits until every one lists all n brokers.
func startChildCluster(t testing.TB, n int) *childCluster {
	return startChildClusterNet(t, n, false, false)
}

// startChildClusterNet is startChildCluster; with proxied, every node's
// listeners are reached through a faultNet (c.net), by clients and peers
// alike, so that links between nodes can be cut; with diskFaults, every
// node runs the errorfs build with an empty rules file (nd.rules), so that
// its disk can be failed (armDisk).
func startChildClusterNet(t testing.TB, n int, proxied, diskFaults bool) *childCluster {
	t.Helper()
	c := &childCluster{t: t, nodes: map[int32]*childNode{}}
	if proxied {
		c.net = newFaultNet(t)
	}
	var voters []string
	kafka := map[int32]string{}     // the address clients and peers dial
	kafkaBind := map[int32]string{} // the address the node binds
	ctrlBind := map[int32]string{}
	for id := int32(1); id <= int32(n); id++ {
		kafkaBind[id] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		ctrlBind[id] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		kafka[id], voters = kafkaBind[id], append(voters, fmt.Sprintf("%d@%s", id, ctrlBind[id]))
		if proxied {
			kafka[id] = c.net.listen(id, kafkaBind[id])
			voters[id-1] = fmt.Sprintf("%d@%s", id, c.net.listen(id, ctrlBind[id]))
		}
	}
	// The controller plane runs SSL, as a production cluster's should:
	// every node presents the same node certificate, whose principal is
	// the only super user.
	pki := newTestPKI(t)
	nodeCert, nodeKey, _ := pki.issue("node", pkix.Name{CommonName: "gregor-node"}, true)
	quoted := make([]string, len(voters))
	for i, v := range voters {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	for id := int32(1); id <= int32(n); id++ {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("node%d", id))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		nd := &childNode{id: id, addr: kafka[id], dataDir: filepath.Join(dir, "data"), cfgPath: filepath.Join(dir, "broker.toml")}
		if diskFaults {
			nd.rules = filepath.Join(dir, "errorfs.rules")
			if err := os.WriteFile(nd.rules, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		text := fmt.Sprintf(`node_id = %d
data_dir = %q

[listeners]
kafka = %q
kafka_advertised = %q
controller = %q
http = ""

[cluster]
voters = [%s]
broker_session_timeout_ms = 2000
broker_heartbeat_interval_ms = 200
controlled_shutdown_timeout_ms = 10000
quorum_election_timeout_ms = 500
controller_listener_protocol = "SSL"

[replication]
replica_lag_time_max_ms = 4000
replica_fetch_wait_max_ms = 200
replica_fetch_backoff_ms = 100

[security]
super_users = ["User:CN=gregor-node"]
tls_cert_file = %q
tls_key_file = %q
tls_ca_file = %q

[topics]
auto_create = false
`, id, nd.dataDir, kafkaBind[id], nd.addr, ctrlBind[id], strings.Join(quoted, ", "), nodeCert, nodeKey, pki.CAFile)
		if err := os.WriteFile(nd.cfgPath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		c.nodes[id] = nd
	}
	// The nodes start together: each waits for a Raft quorum before it
	// answers, so they cannot be started and awaited one at a time.
	started := make(chan error, n)
	for _, nd := range c.nodes {
		go func() {
			nd.proc = startChildBrokerAsync(t, nd)
			c.track(nd)
			started <- nil
		}()
	}
	for range n {
		<-started
	}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			if nd.paused && nd.proc != nil {
				_ = nd.proc.cmd.Process.Signal(syscall.SIGCONT)
			}
		}
	})
	for _, nd := range c.nodes {
		waitForBroker(t, nd.addr, nil)
	}
	c.waitMetadata(fmt.Sprintf("%d brokers", n), 60*time.Second, func(md kadm.Metadata) bool { return len(md.Brokers) == n })
	return c
}

// startChildBrokerAsync starts "gregor serve" without waiting for it to
// answer (a cluster node answers only once a controller quorum exists).
func startChildBrokerAsync(t testing.TB, nd *childNode) *childBroker {
	cfgPath, addr := nd.cfgPath, nd.addr
	logs := &lockedBuffer{}
	level := "warn"
	if l := os.Getenv("FAULT_LOG_LEVEL"); l != "" {
		level = l // info shows every ISR and leadership change
	}
	bin := gregorBinary(t)
	if nd.rules != "" {
		bin = gregorErrorfsBinary(t)
	}
	cmd := exec.Command(bin, "serve", "--config", cfgPath, "--log-level", level)
	if nd.rules != "" {
		cmd.Env = append(os.Environ(), "GREGOR_ERRORFS_RULES="+nd.rules)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Errorf("start gregor serve: %v", err)
		return nil
	}
	c := &childBroker{t: t, Addr: addr, cmd: cmd, done: make(chan struct{}), logs: logs}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			t.Logf("gregor serve %s output (pid %d):\n%s", cfgPath, cmd.Process.Pid, logs.String())
		}
	})
	return c
}

// createReplicated creates an RF=3 topic. A CreateTopics retried by the
// client after a lost answer (a controller change) finds the topic it
// created: on a fresh cluster that counts as created.
func createReplicated(t testing.TB, ctx context.Context, adm *kadm.Client, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	res, err := adm.CreateTopic(ctx, partitions, 3, configs, topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("create %s: %v (%s)", topic, err, res.ErrMessage)
	}
}

// addrs lists the Kafka listeners of every node.
func (c *childCluster) addrs() []string {
	var out []string
	for _, nd := range c.nodes {
		out = append(out, nd.addr)
	}
	slices.Sort(out)
	return out
}

// client returns a franz-go client seeded with every node, closed at test end.
func (c *childCluster) client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.addrs()...)}, opts...)...)
	if err != nil {
		c.t.Fatalf("kgo.NewClient: %v", err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// metadata asks any live node for metadata.
func (c *childCluster) metadata(ctx context.Context) (kadm.Metadata, error) {
	var lastErr error = fmt.Errorf("no node is up")
	for _, nd := range c.nodes {
		if nd.proc == nil || nd.paused {
			continue
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(nd.addr), kgo.DialTimeout(time.Second))
		if err != nil {
			return kadm.Metadata{}, err
		}
		md, err := kadm.NewClient(cl).Metadata(ctx)
		cl.Close()
		if err == nil {
			return md, nil
		}
		lastErr = err
	}
	return kadm.Metadata{}, lastErr
}

// waitMetadata polls the live nodes' metadata until ok holds.
func (c *childCluster) waitMetadata(what string, limit time.Duration, ok func(kadm.Metadata) bool) kadm.Metadata {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		md, err := c.metadata(ctx)
		cancel()
		if err == nil && ok(md) {
			return md
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waiting %v for %s: last metadata brokers %+v topics %+v, err %v", limit, what, md.Brokers, md.Topics, err)
		}
		time.Sleep(100 * time.Millisecond) // polling a remote condition, not synchronising
	}
}

// fullISR reports whether every partition of topic has a live leader and
// all its replicas in the ISR.
func fullISR(md kadm.Metadata, topic string, partitions int) bool {
	td, ok := md.Topics[topic]
	if !ok || len(td.Partitions) != partitions {
		return false
	}
	for _, p := range td.Partitions {
		if p.Err != nil || p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
			return false
		}
	}
	return true
}

// kill SIGKILLs a node (resuming it first if paused, so the kill is
// immediate) and waits until the process is gone.
func (c *childCluster) kill(id int32) {
	c.t.Helper()
	nd := c.nodes[id]
	if nd.proc == nil {
		return
	}
	if err := nd.proc.kill(); err != nil {
		c.t.Fatalf("node %d: %v", id, err)
	}
	nd.proc, nd.paused = nil, false
	c.track(nd)
}

// track tells the fault network which process is the node now.
func (c *childCluster) track(nd *childNode) {
	if c.net == nil {
		return
	}
	pid := 0
	if nd.proc != nil {
		pid = nd.proc.cmd.Process.Pid
	}
	c.net.setNode(nd.id, pid)
}

// stop sends SIGTERM (a controlled shutdown) and waits for the exit.
func (c *childCluster) stop(id int32) {
	nd := c.nodes[id]
	if nd.proc == nil {
		return
	}
	if nd.paused {
		c.resume(id)
	}
	proc := nd.proc
	nd.proc = nil
	c.track(nd)
	_ = proc.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-proc.done:
		if proc.err != nil {
			c.t.Errorf("node %d exited with %v after SIGTERM", id, proc.err)
		}
	case <-time.After(30 * time.Second):
		// A Go process dumps every goroutine on SIGQUIT: the hang's cause.
		_ = proc.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-proc.done:
		case <-time.After(10 * time.Second):
			_ = proc.cmd.Process.Kill()
			<-proc.done
		}
		out := proc.logs.String()
		c.t.Errorf("node %d did not stop within 30s of SIGTERM; its output ends:\n%s", id, out[max(0, len(out)-200000):])
	}
}

// restart starts a stopped node on its data directory and waits until it
// answers.
func (c *childCluster) restart(id int32) {
	c.t.Helper()
	nd := c.nodes[id]
	if nd.proc != nil {
		c.t.Fatalf("node %d is already running", id)
	}
	nd.proc = startChildBrokerAsync(c.t, nd)
	if nd.proc == nil {
		c.t.FailNow()
	}
	c.track(nd)
	exited := make(chan error, 1)
	go func(p *childBroker) {
		<-p.done
		exited <- p.err
	}(nd.proc)
	waitForBroker(c.t, nd.addr, exited)
}

// pause SIGSTOPs a node; resume SIGCONTs it.
func (c *childCluster) pause(id int32) {
	c.t.Helper()
	nd := c.nodes[id]
	if nd.proc == nil || nd.paused {
		return
	}
	if err := nd.proc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		c.t.Fatalf("SIGSTOP node %d: %v", id, err)
	}
	nd.paused = true
}

func (c *childCluster) resume(id int32) {
	c.t.Helper()
	nd := c.nodes[id]
	if nd.proc == nil || !nd.paused {
		return
	}
	if err := nd.proc.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		c.t.Fatalf("SIGCONT node %d: %v", id, err)
	}
	nd.paused = false
}
