// Command mirror benchmarks Gregor's mirror (copy and link mode) against
// MirrorMaker 2 (dedicated mode, Kafka's connect-mirror jars) on this
// machine, one after the other in one run, with Apache Kafka as the source
// and a fresh single-node Gregor as the target each time, on the same data
// (random 1 KB values, keyed, over 6 partitions): the time to catch up on a
// backlog, the steady-state replication latency p50/p99 at a fixed rate,
// the mirror process's peak RSS and CPU time while catching up, and the
// time to fail a consumer group over (from the mirror stopping to the
// group resuming on the target at a translated offset, nothing skipped).
// It prints one table with the ratios and writes JSON to bench/results/.
// Apache Kafka is started by scripts/kafka-ref.sh; the caller holds the
// ports lock.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	sourceAddr = "127.0.0.1:29092" // scripts/kafka-ref.sh, one node
	topic      = "bench"
	partitions = 6
	recordSize = 1024
	group      = "bench-failover"
)

// targetAddr is the Gregor target's listener, on a port free at start.
var targetAddr string

// mirrorMetrics is a Gregor mirror's metrics listener ("" for MirrorMaker 2).
var mirrorMetrics string

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

type options struct {
	backlogMB   int
	rate        int
	latencyFor  time.Duration
	warmup      time.Duration
	gregor      string
	kafkaRef    string
	kafkaVer    string
	mm2Version  string
	cache       string
	out         string
	only        string
	catchupWait time.Duration
}

// run is one mirror's figures.
type run struct {
	Mirror     string  `json:"mirror"`
	CatchupS   float64 `json:"catchup_seconds"`
	FirstS     float64 `json:"first_record_seconds"`
	RecordsPS  float64 `json:"catchup_records_per_second"`
	P50Ms      float64 `json:"latency_p50_ms"`
	P99Ms      float64 `json:"latency_p99_ms"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	CPUS       float64 `json:"cpu_seconds_catchup"`
	FailoverS  float64 `json:"failover_seconds"`
	AckP50Ms   float64 `json:"mirror_ack_p50_ms_bucket,omitempty"`
	AckP99Ms   float64 `json:"mirror_ack_p99_ms_bucket,omitempty"`
	Note       string  `json:"note,omitempty"`
}

func main() {
	var o options
	flag.IntVar(&o.backlogMB, "backlog-mb", 200, "backlog to catch up on, in MB of 1 KB records (the issue's figure is 1024)")
	flag.IntVar(&o.rate, "rate", 2000, "records per second for the steady-state latency")
	flag.DurationVar(&o.latencyFor, "latency-for", 15*time.Second, "how long the steady-state latency is measured")
	flag.DurationVar(&o.warmup, "latency-warmup", 3*time.Second, "records produced at the fixed rate before the latency is measured (client connections, the JVM's JIT), not counted")
	flag.StringVar(&o.gregor, "gregor", "bin/gregor", "the gregor binary")
	flag.StringVar(&o.kafkaRef, "kafka-ref", "scripts/kafka-ref.sh", "the Apache Kafka launcher")
	flag.StringVar(&o.kafkaVer, "kafka-version", "4.4.0", "Apache Kafka version of the source")
	flag.StringVar(&o.mm2Version, "mm2-version", "4.1.1", "connect-mirror version (Maven Central serves 4.1.1, not 4.4.0)")
	flag.StringVar(&o.cache, "cache", envOr("GREGOR_CACHE", ".cache"), "where Kafka's jars are")
	flag.StringVar(&o.out, "out", "bench/results", "directory for the JSON results")
	flag.StringVar(&o.only, "only", "", "comma-separated mirrors to run (gregor-copy, gregor-link, mm2); default all")
	flag.DurationVar(&o.catchupWait, "catchup-timeout", 10*time.Minute, "give up on a catch-up after this long")
	flag.Parse()
	if err := benchmark(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-mirror:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-mirror: "+format+"\n", args...)
}

func benchmark(o options) error {
	work, err := os.MkdirTemp("", "bench-mirror-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	kafka := func(args ...string) error {
		cmd := exec.Command(o.kafkaRef, args...)
		cmd.Env = append(os.Environ(), "KAFKA_VERSION="+o.kafkaVer, "GREGOR_CACHE="+o.cache)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd.Run()
	}
	if err := kafka("start"); err != nil {
		return fmt.Errorf("start Apache Kafka %s: %w", o.kafkaVer, err)
	}
	defer func() { _ = kafka("stop") }()

	records := o.backlogMB << 10
	logf("writing a backlog of %d records of %d bytes over %d partitions to Apache Kafka %s", records, recordSize, partitions, o.kafkaVer)
	if err := createTopic(sourceAddr, topic); err != nil {
		return err
	}
	if err := produceBacklog(records); err != nil {
		return err
	}
	// A group that read half of the backlog, for the failover.
	groupAt, err := commitSourceGroup()
	if err != nil {
		return err
	}
	var runs []run
	for _, name := range []string{"gregor-copy", "gregor-link", "mm2"} {
		if o.only != "" && !strings.Contains(","+o.only+",", ","+name+",") {
			continue
		}
		r, err := benchOne(o, work, name, groupAt)
		if err != nil {
			r.Note = err.Error()
			logf("%s: %v", name, err)
		}
		runs = append(runs, r)
	}
	printTable(o, records, runs)
	return writeJSON(o, records, runs)
}

// mirrorProc is a running mirror process.
type mirrorProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *mirrorProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func start(cmd *exec.Cmd, logPath string) (*mirrorProc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &mirrorProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

// benchOne runs one mirror against a fresh Gregor target.
func benchOne(o options, work, name string, groupAt map[int32]int64) (run, error) {
	r := run{Mirror: name}
	dir := filepath.Join(work, name)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return r, err
	}
	var err error
	if targetAddr, err = freeAddr(); err != nil {
		return r, err
	}
	brokerToml := fmt.Sprintf("data_dir = %q\n[listeners]\nkafka = %q\nhttp = \"\"\n", filepath.Join(dir, "data"), targetAddr)
	if err := os.WriteFile(filepath.Join(dir, "broker.toml"), []byte(brokerToml), 0o644); err != nil {
		return r, err
	}
	var target *mirrorProc
	target, err = start(exec.Command(o.gregor, "serve", "--config", filepath.Join(dir, "broker.toml"), "--log-level", "warn"),
		filepath.Join(dir, "target.log"))
	if err != nil {
		return r, fmt.Errorf("start the Gregor target: %w", err)
	}
	defer target.stop()
	if err := waitBroker(targetAddr, 60*time.Second); err != nil {
		return r, err
	}
	select {
	case <-target.done:
		return r, fmt.Errorf("the Gregor target exited (see %s)", filepath.Join(dir, "target.log"))
	default:
	}
	want, err := sumEnds(sourceAddr, topic)
	if err != nil {
		return r, err
	}
	mp, err := startMirror(o, dir, name)
	if err != nil {
		return r, err
	}
	defer mp.stop()
	began := time.Now()
	logf("%s: catching up on %d records", name, want)
	sampler := newSampler(mp.cmd.Process.Pid)
	got, first, err := waitTarget(targetTopic(), want, o.catchupWait, mp, sampler)
	if err != nil {
		return r, fmt.Errorf("catch-up: %w (%d of %d records)", err, got, want)
	}
	r.CatchupS = time.Since(began).Seconds()
	r.FirstS = first.Sub(began).Seconds()
	r.RecordsPS = float64(want) / r.CatchupS
	r.PeakRSSMiB, r.CPUS = sampler.peakRSS, sampler.cpu()
	logf("%s: caught up in %.2f s (%.0f records/s), peak RSS %.0f MiB, %.1f CPU s", name, r.CatchupS, r.RecordsPS, r.PeakRSSMiB, r.CPUS)

	var before map[float64]float64
	if name != "mm2" {
		before = latencyBuckets()
	}
	r.P50Ms, r.P99Ms, err = steadyLatency(o.rate, o.warmup, o.latencyFor)
	if err != nil {
		return r, fmt.Errorf("latency: %w", err)
	}
	logf("%s: replication latency at %d records/s: p50 %.1f ms, p99 %.1f ms", name, o.rate, r.P50Ms, r.P99Ms)
	if name != "mm2" {
		// The mirror's own histogram (source timestamp to the target's
		// acknowledgement) over the same records, warm-up included: what
		// is left of the end-to-end figure is the target's consumer.
		if p50, p99, ok := bucketQuantiles(before, latencyBuckets()); ok {
			logf("%s: source timestamp to target acknowledgement (mirror histogram): p50 <= %.0f ms, p99 <= %.0f ms", name, p50, p99)
			r.AckP50Ms, r.AckP99Ms = p50, p99
		}
	}

	r.FailoverS, err = failover(o, dir, name, mp, groupAt)
	if err != nil {
		return r, fmt.Errorf("failover: %w", err)
	}
	logf("%s: consumer group failover in %.2f s", name, r.FailoverS)
	return r, nil
}

func targetTopic() string { return "east." + topic }

// startMirror starts one mirror in dedicated mode.
func startMirror(o options, dir, name string) (*mirrorProc, error) {
	if name == "mm2" {
		props := fmt.Sprintf(`clusters = east, west
east.bootstrap.servers = %s
west.bootstrap.servers = %s
east->west.enabled = true
west->east.enabled = false
east->west.topics = %s
east->west.groups = %s
tasks.max = 2
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
refresh.topics.interval.seconds = 5
refresh.groups.interval.seconds = 1
emit.checkpoints.interval.seconds = 1
sync.group.offsets.enabled = true
sync.group.offsets.interval.seconds = 1
`, sourceAddr, targetAddr, topic, group)
		path := filepath.Join(dir, "mm2.properties")
		if err := os.WriteFile(path, []byte(props), 0o644); err != nil {
			return nil, err
		}
		jars := filepath.Join(o.cache, "m2", "org", "apache", "kafka")
		cp := strings.Join([]string{
			filepath.Join(o.cache, "kafka", o.mm2Version, "libs", "*"),
			filepath.Join(jars, "connect-mirror", o.mm2Version, "connect-mirror-"+o.mm2Version+".jar"),
			filepath.Join(jars, "connect-mirror-client", o.mm2Version, "connect-mirror-client-"+o.mm2Version+".jar"),
		}, ":")
		for _, j := range strings.Split(cp, ":")[1:] {
			if _, err := os.Stat(j); err != nil {
				return nil, fmt.Errorf("MirrorMaker 2 %s jar missing (mvn dependency:get -Dartifact=org.apache.kafka:%s:%s): %w",
					o.mm2Version, filepath.Base(filepath.Dir(filepath.Dir(j))), o.mm2Version, err)
			}
		}
		return start(exec.Command("java", "-Xmx1g", "-cp", cp, "org.apache.kafka.connect.mirror.MirrorMaker", path),
			filepath.Join(dir, "mirror.log"))
	}
	mode := strings.TrimPrefix(name, "gregor-")
	toml := fmt.Sprintf(`[source]
name = "east"
bootstrap = [%q]
[target]
name = "west"
bootstrap = [%q]
[topics]
include = [%q]
rename = "prefix"
[groups]
include = [%q]
[mirror]
mode = %q
checkpoint_interval_ms = 1000
refresh_interval_ms = 5000
`, sourceAddr, targetAddr, topic, group, mode)
	path := filepath.Join(dir, "mirror.toml")
	if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
		return nil, err
	}
	var err error
	if mirrorMetrics, err = freeAddr(); err != nil {
		return nil, err
	}
	return start(exec.Command(o.gregor, "mirror", "--config", path, "--log-level", "warn", "--metrics-addr", mirrorMetrics),
		filepath.Join(dir, "mirror.log"))
}

func newClient(addr string, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
}

func createTopic(addr, name string) error {
	cl, err := newClient(addr)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	return nil
}

func waitBroker(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		cl, err := newClient(addr)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err = cl.Ping(ctx)
			cancel()
			cl.Close()
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("broker %s not up: %w", addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// produceBacklog writes n random 1 KB values with distinct keys.
func produceBacklog(n int) error {
	cl, err := newClient(sourceAddr, kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(20000))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := context.Background()
	errs := make(chan error, 1)
	for i := 0; i < n; i++ {
		v := make([]byte, recordSize)
		_, _ = rand.Read(v)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte("k" + strconv.Itoa(i)), Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	select {
	case err := <-errs:
		return fmt.Errorf("produce the backlog: %w", err)
	default:
	}
	return nil
}

func endOffsets(addr, name string) (map[int32]int64, error) {
	cl, err := newClient(addr)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := ends.Error(); err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out, nil
}

func sumEnds(addr, name string) (int64, error) {
	ends, err := endOffsets(addr, name)
	var n int64
	for _, e := range ends {
		n += e
	}
	return n, err
}

// waitTarget polls the target topic until it holds want records.
// It returns when the first record was seen too (the mirror's start-up).
func waitTarget(name string, want int64, limit time.Duration, mp *mirrorProc, s *sampler) (int64, time.Time, error) {
	deadline := time.Now().Add(limit)
	var got int64
	var first time.Time
	for {
		s.sample()
		got, _ = sumEnds(targetAddr, name)
		if got > 0 && first.IsZero() {
			first = time.Now()
		}
		if got >= want {
			return got, first, nil
		}
		select {
		case <-mp.done:
			return got, first, errors.New("the mirror process exited")
		default:
		}
		if time.Now().After(deadline) {
			return got, first, fmt.Errorf("not caught up within %v", limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sampler follows a process's resident set and CPU time.
type sampler struct {
	pid            int
	peakRSS        float64 // MiB
	cpu0, cpuLast  float64
	clkTck         float64
	firstSampleSet bool
}

func newSampler(pid int) *sampler {
	s := &sampler{pid: pid, clkTck: 100}
	s.sample()
	return s
}

func (s *sampler) sample() {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				if f := strings.Fields(l); len(f) >= 2 {
					if kb, err := strconv.ParseFloat(f[1], 64); err == nil && kb/1024 > s.peakRSS {
						s.peakRSS = kb / 1024
					}
				}
			}
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid)); err == nil {
		// Fields after the command name's closing parenthesis: utime
		// and stime are the 12th and 13th.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 {
			f := strings.Fields(string(b)[i+1:])
			if len(f) > 12 {
				u, _ := strconv.ParseFloat(f[11], 64)
				st, _ := strconv.ParseFloat(f[12], 64)
				c := (u + st) / s.clkTck
				if !s.firstSampleSet {
					s.cpu0, s.firstSampleSet = c, true
				}
				s.cpuLast = c
			}
		}
	}
}

// cpu is the CPU time used since the first sample (the mirror's start up,
// JVM included, counts: it is part of catching up).
func (s *sampler) cpu() float64 { return s.cpuLast }

// commitSourceGroup commits, for the failover group, the middle of every
// source partition and returns those offsets.
func commitSourceGroup() (map[int32]int64, error) {
	ends, err := endOffsets(sourceAddr, topic)
	if err != nil {
		return nil, err
	}
	cl, err := newClient(sourceAddr)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	at := map[int32]int64{}
	offs := kadm.Offsets{}
	for p, e := range ends {
		at[p] = e / 2
		offs.Add(kadm.Offset{Topic: topic, Partition: p, At: e / 2, LeaderEpoch: -1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	return at, err
}

// failover stops the mirror (Gregor's is promoted first, as an operator
// would), then measures the time until the group's committed offsets on
// the target are translated (never ahead of what it read on the source)
// and a consumer of the group reads, on every partition, the record that
// follows on the source.
func failover(o options, dir, name string, mp *mirrorProc, at map[int32]int64) (float64, error) {
	srcKeys, err := keysAt(sourceAddr, topic, at)
	if err != nil {
		return 0, err
	}
	began := time.Now()
	if name != "mm2" {
		cmd := exec.Command(o.gregor, "mirror", "promote", targetTopic(), "--config", filepath.Join(dir, "mirror.toml"))
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("promote: %w: %s", err, out)
		}
	}
	// The group's synced offsets, polled until every partition has one.
	cl, err := newClient(targetAddr)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(2 * time.Minute)
	var committed kadm.OffsetResponses
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		committed, err = adm.FetchOffsets(ctx, group)
		cancel()
		if err == nil && len(committed[targetTopic()]) == partitions {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the target group %s has no offsets for %s after 2 minutes", group, targetTopic())
		}
		time.Sleep(100 * time.Millisecond)
	}
	mp.stop()
	// Resume: read one record per partition from the committed offset;
	// its key must not come after the source's next record (nothing
	// skipped; MirrorMaker 2 may go back up to offset.lag.max records).
	from := map[int32]int64{}
	for p, r := range committed[targetTopic()] {
		from[p] = r.At
	}
	tgtKeys, err := keysAt(targetAddr, targetTopic(), from)
	if err != nil {
		return 0, err
	}
	took := time.Since(began).Seconds()
	for p, k := range srcKeys {
		tk, ok := tgtKeys[p]
		if !ok {
			return 0, fmt.Errorf("partition %d: nothing at the translated offset %d", p, from[p])
		}
		if keyIndex(tk) > keyIndex(k) {
			return 0, fmt.Errorf("partition %d: resumes at %s, after the source's next record %s: records skipped", p, tk, k)
		}
	}
	return took, nil
}

func keyIndex(k string) int {
	n, _ := strconv.Atoi(strings.TrimLeft(k, "klw"))
	return n
}

// keysAt reads the key of the record at each partition's offset.
func keysAt(addr, name string, at map[int32]int64) (map[int32]string, error) {
	offsets := map[int32]kgo.Offset{}
	for p, o := range at {
		offsets[p] = kgo.NewOffset().At(o)
	}
	cl, err := newClient(addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{name: offsets}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := map[int32]string{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(out) < len(at) && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if _, ok := out[r.Partition]; !ok {
				out[r.Partition] = string(r.Key)
			}
		})
	}
	if len(out) < len(at) {
		return out, fmt.Errorf("read %s: %d of %d partitions answered", name, len(out), len(at))
	}
	return out, nil
}

func printTable(o options, records int, runs []run) {
	by := map[string]run{}
	for _, r := range runs {
		by[r.Mirror] = r
	}
	mm2 := by["mm2"]
	fmt.Printf("\nbench-mirror: Apache Kafka %s source, Gregor target, %d x 1 KB keyed records over %d partitions (%d MB backlog), latency at %d records/s for %v after a %v warm-up, MirrorMaker 2 %s dedicated mode tasks.max=2; %d CPUs\n\n",
		o.kafkaVer, records, partitions, o.backlogMB, o.rate, o.latencyFor, o.warmup, o.mm2Version, runtime.NumCPU())
	fmt.Printf("%-28s %14s %14s %14s %12s %12s\n", "metric", "gregor-copy", "gregor-link", "mm2", "copy/mm2", "link/mm2")
	row := func(metric string, f func(run) float64) {
		c, l, m := f(by["gregor-copy"]), f(by["gregor-link"]), f(mm2)
		ratio := func(a float64) string {
			if a == 0 || m == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2fx", a/m)
		}
		fmt.Printf("%-28s %14.2f %14.2f %14.2f %12s %12s\n", metric, c, l, m, ratio(c), ratio(l))
	}
	row("catch-up (s)", func(r run) float64 { return r.CatchupS })
	row("catch-up (records/s)", func(r run) float64 { return r.RecordsPS })
	row("first record on target (s)", func(r run) float64 { return r.FirstS })
	row("latency p50 (ms)", func(r run) float64 { return r.P50Ms })
	row("latency p99 (ms)", func(r run) float64 { return r.P99Ms })
	row("mirror peak RSS (MiB)", func(r run) float64 { return r.PeakRSSMiB })
	row("mirror CPU, catch-up (s)", func(r run) float64 { return r.CPUS })
	row("group failover (s)", func(r run) float64 { return r.FailoverS })
	for _, r := range runs {
		if r.Note != "" {
			fmt.Printf("%s: %s\n", r.Mirror, r.Note)
		}
	}
}

func writeJSON(o options, records int, runs []run) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	doc := map[string]any{"kafka_version": o.kafkaVer, "mm2_version": o.mm2Version, "records": records, "record_bytes": recordSize,
		"partitions": partitions, "rate": o.rate, "latency_seconds": o.latencyFor.Seconds(), "latency_warmup_seconds": o.warmup.Seconds(), "cpus": runtime.NumCPU(), "runs": runs, "when": time.Now().UTC().Format(time.RFC3339)}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(o.out, "mirror-"+time.Now().UTC().Format("20060102-150405")+".json")
	logf("results in %s", path)
	return os.WriteFile(path, b, 0o644)
}
