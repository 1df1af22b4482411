// Command compare benchmarks Gregor and Apache Kafka side by side on this machine, one after
// the other in one run, with the same client and settings (the JSON lists what both share and
// every difference): produce throughput (100 B and 1 KB incompressible random values keyed by
// 10,000 random keys, acks=1 and acks=all, 1 and 6 partitions; 1 KB JSON values with lz4 and
// zstd) and consume throughput with franz-go, produce latency at a fixed rate measured from the
// intended send time, Kafka's ProducerPerformance and ConsumerPerformance (its group join and its
// fetch phase as rows of their own), the broker's peak RSS and the time from process start to
// the first acknowledged produce; each throughput row beside the machine's physical limit
// (loopback TCP, sequential writes with and without fsync) measured in the same run; then, on
// 3-node clusters of each (RF=3, min.insync.replicas=2, acks=all), produce throughput of 100 B
// and 1 KB records and produce latency p50/p99 at a fixed rate; then, on fresh single nodes of
// each (restart.go), RSS against idle partitions, a clean restart with 10,000 partitions and
// their data timed to the first produce and to every partition serving, and restarts after
// kill -9 at several log sizes.
// It prints a table with Gregor/Kafka ratios and writes JSON with machine facts to
// bench/results/. It owns measurement only; the brokers are started by scripts/.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Result is one metric measured on both brokers.
type Result struct {
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	Better string  `json:"better"` // "higher" or "lower"
	Gregor float64 `json:"gregor"`
	Kafka  float64 `json:"kafka"`
	Ratio  float64 `json:"ratio_gregor_over_kafka"`
	// Limit is the machine's ceiling for the row measured in the same run (see limits), 0 where
	// none applies.
	Limit float64 `json:"physical_limit,omitempty"`
	Note  string  `json:"note,omitempty"`
}

// target is one broker under test.
type target struct {
	name      string
	bootstrap string
	start     func() error
	stop      func()
	pidFile   string
	startFile string
	// The restart section's: a launch on the last start's data without waiting, a SIGKILL, and
	// the data dir (the parent of the partition directories).
	restart func() error
	crash   func() error
	dataDir string
	// cluster targets run the cluster section; pidFiles are their nodes'.
	cluster  bool
	pidFiles []string
	// plainController: a Gregor cluster with a PLAINTEXT controller plane (see ctlplane.go).
	plainController bool
}

type options struct {
	durability string
	scale      float64
	javaTools  bool
	repeat     int
	single     bool
	cluster    bool
	quick      bool
	plainCtl   bool
	full       bool
	// The restart section (restart.go); restartOn runs it.
	restartOn bool
	restart   restartPlan
	// elapsed is the run's length, for the JSON.
	elapsed time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.durability, "durability", "page_cache", "page_cache: Gregor durability=page_cache vs Kafka's default; fsync: Gregor durability=fsync vs Kafka with log.flush.interval.messages=1")
	flag.Float64Var(&o.scale, "scale", 1, "multiplies every record count (0.1 for a quick run)")
	flag.BoolVar(&o.javaTools, "java-tools", true, "also run Kafka's ProducerPerformance and ConsumerPerformance")
	flag.IntVar(&o.repeat, "repeat", 3, "runs of each throughput measurement; the table shows the median")
	flag.BoolVar(&o.single, "single", true, "run the single-node section")
	flag.BoolVar(&o.cluster, "cluster", true, "run the 3-node section (RF=3, min.insync.replicas=2, acks=all)")
	flag.BoolVar(&o.quick, "quick", false, "a one-minute subset: --scale 0.02 --repeat 1 --java-tools=false --cluster=false, no share-group row, curves to 100 partitions, one pass of the limits, no restart section (--quick --restart: at 1,000 partitions and 16 MB, one kill -9 at 64 MB)")
	flag.BoolVar(&o.plainCtl, "cluster-plaintext-controller", false, "also run the 3-node section on Gregor with a PLAINTEXT controller plane, beside its SSL one (the cost of TLS)")
	flag.BoolVar(&o.full, "full", false, "also the heavy rows: 5,000 and 10,000 idle connections (and the PLAINTEXT controller plane rows)")
	flag.BoolVar(&o.restartOn, "restart", true, "run the restart section: RSS vs idle partitions, clean restart with data, restart after kill -9 at several log sizes")
	flag.IntVar(&o.restart.partitions, "startup-partitions", 10_000, "idle partitions of the RSS and start-up rows (0 leaves those rows out)")
	flag.IntVar(&o.restart.dataMB, "startup-mb", 1024, "MB of 1 KB records spread over them before the clean restart (the issue's 10 GB: --startup-mb 10240)")
	recoveryMB := flag.String("recovery-mb", "256,1024", "log sizes in MB of the kill -9 rows, comma-separated (\"\" leaves them out)")
	out := flag.String("out", "bench/results", "directory for the JSON result")
	against := flag.String("against", "", "measure an already running Gregor (bootstrap list) alone, start and stop nothing, print rows tab-separated: with --against-nodes 3 the 3-node section and its offset commit rows, with 1 the offset commit rows (before/after runs of two builds)")
	againstN := flag.Int("against-nodes", 1, "the brokers of --against: 1, or 3 for the 3-node section")
	flag.Parse()
	var err error
	if o.restart.recoveryMB, err = parseSizesMB(*recoveryMB); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if o.quick {
		o.scale, o.repeat, o.javaTools, o.cluster, o.single = 0.02, 1, false, false, true
		// Kafka's restarts alone take most of a minute: the section runs, small, only when asked.
		o.restartOn = explicit("restart") && o.restartOn
		o.restart = restartPlan{partitions: 1000, dataMB: 16, recoveryMB: []int{64}}
	}
	if o.full {
		o.plainCtl = true
	}
	if o.repeat < 1 {
		o.repeat = 1
	}
	if !o.single && !o.cluster && !o.restartOn {
		fmt.Fprintln(os.Stderr, "compare: --single=false, --cluster=false and --restart=false leave nothing to run")
		os.Exit(2)
	}
	if o.durability != "page_cache" && o.durability != "fsync" {
		fmt.Fprintln(os.Stderr, "compare: --durability must be page_cache or fsync")
		os.Exit(2)
	}
	if *against != "" {
		err := awaitBrokers(*against, *againstN)
		if err == nil {
			err = measureAgainst(*against, *againstN, o)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(o, *out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// explicit reports whether the flag was given on the command line.
func explicit(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func sh(args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("compare: %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func run(o options, outDir string) error {
	gregorArgs := []string{"scripts/interop-gregor.sh", "start", "--durability", o.durability}
	kafkaArgs := []string{"scripts/kafka-ref.sh", "start"}
	if o.durability == "fsync" {
		kafkaArgs = append(kafkaArgs, "--fsync")
	}
	var targets []target
	single := []target{
		{name: "gregor", bootstrap: "127.0.0.1:28092", start: func() error { return sh(gregorArgs...) },
			stop:    func() { _ = sh("scripts/interop-gregor.sh", "stop") },
			restart: func() error { return sh("scripts/interop-gregor.sh", "restart") },
			crash:   func() error { return sh("scripts/interop-gregor.sh", "kill") },
			pidFile: cacheDir("gregor-run/pid"), startFile: cacheDir("gregor-run/started_at"), dataDir: cacheDir("gregor-run/data")},
		{name: "kafka", bootstrap: "127.0.0.1:29092", start: func() error { return sh(kafkaArgs...) },
			stop:    func() { _ = sh("scripts/kafka-ref.sh", "stop") },
			restart: func() error { return sh("scripts/kafka-ref.sh", "restart") },
			crash:   func() error { return sh("scripts/kafka-ref.sh", "kill") },
			pidFile: cacheDir("kafka-run/cluster-1/node1/pid"), startFile: cacheDir("kafka-run/cluster-1/node1/started_at"), dataDir: cacheDir("kafka-run/cluster-1/node1/data")},
	}
	ckpt := []string{"--checkpoint-interval-ms", fmt.Sprint(restartCheckpointMs)}
	restartTargets := []target{single[0], single[1]}
	restartTargets[0].start = func() error { return sh(append(gregorArgs, ckpt...)...) }
	restartTargets[1].start = func() error { return sh(append(kafkaArgs, ckpt...)...) }
	if o.single {
		targets = append(targets, single...)
	}
	if o.cluster {
		targets = append(targets, clusterTargets(o)...)
		if o.plainCtl {
			targets = append(targets, plainControllerTarget(o))
		}
	}
	if nofile, err := raiseNoFile(); err == nil {
		fmt.Fprintf(os.Stderr, "compare: open-file limit %d\n", nofile)
		if fit := fitPartitions(o.restart.partitions, nofile); o.restartOn && fit < o.restart.partitions && !explicit("startup-partitions") {
			fmt.Fprintf(os.Stderr, "compare: the open-file limit fits %d idle partitions at a descriptor each, not %d; the start-up rows use %d (--startup-partitions %d insists)\n",
				fit, o.restart.partitions, fit, o.restart.partitions)
			o.restart.partitions = fit
		}
	}
	began := time.Now()
	passes := 3
	if o.quick {
		passes = 1
	}
	lim, err := measureLimits(limitsDir(), o.scale, passes)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "compare: limits: loopback %.0f MB/s, sequential write %.0f MB/s, with fsync each MiB %.0f MB/s\n",
		lim.LoopbackMBps, lim.WriteMBps, lim.WriteSyncMBps)
	measured := map[string]map[string]float64{}
	notes := map[string]string{}
	var order []string
	units := map[string][2]string{}
	record := func(t, metric, unit, better string, v float64) {
		if measured[metric] == nil {
			measured[metric] = map[string]float64{}
			order = append(order, metric)
			units[metric] = [2]string{unit, better}
		}
		measured[metric][t] = v
	}
	for _, t := range targets {
		if t.cluster {
			fmt.Fprintf(os.Stderr, "compare: === %s, %d nodes ===\n", t.name, clusterNodes)
		} else {
			fmt.Fprintf(os.Stderr, "compare: === %s ===\n", t.name)
		}
		if err := t.start(); err != nil {
			return err
		}
		var err error
		if t.cluster {
			record := record
			if t.plainController {
				rec := record
				record = func(t, m, u, b string, v float64) { rec(t, plainControllerMetric(m), u, b, v) }
			}
			err = measureCluster(t, o, record)
			if err == nil {
				err = measureClusterCommits(t, o, record)
			}
			if rss, rerr := sumPeakRSS(t.pidFiles); rerr == nil {
				record(t.name, clusterPrefix+"peak RSS summed over the 3 brokers", "MiB", "lower", rss)
			} else {
				fmt.Fprintf(os.Stderr, "compare: %s cluster: peak RSS: %v\n", t.name, rerr)
			}
		} else {
			err = measure(t, o, record, notes)
			if rss, rerr := peakRSS(t.pidFile); rerr == nil {
				record(t.name, "broker peak RSS", "MiB", "lower", rss)
			} else {
				fmt.Fprintf(os.Stderr, "compare: %s: peak RSS: %v\n", t.name, rerr)
			}
			// After the peak RSS row, so that the connections do not count in it.
			if err == nil {
				err = measureIdleConns(t, o, record)
			}
		}
		t.stop()
		if err != nil {
			return fmt.Errorf("compare: %s: %w", t.name, err)
		}
		fmt.Fprintf(os.Stderr, "compare: %.0f s into the run\n", time.Since(began).Seconds())
	}
	if o.restartOn {
		for _, t := range restartTargets {
			fmt.Fprintf(os.Stderr, "compare: === %s, restart section ===\n", t.name)
			if err := measureRestart(t, o.restart, record, notes); err != nil {
				return fmt.Errorf("compare: %s: %w", t.name, err)
			}
			fmt.Fprintf(os.Stderr, "compare: %.0f s into the run\n", time.Since(began).Seconds())
		}
	}
	o.elapsed = time.Since(began)
	fillPlainControllerKafka(measured)
	var results []Result
	for _, m := range order {
		r := Result{Metric: m, Unit: units[m][0], Better: units[m][1], Gregor: measured[m]["gregor"], Kafka: measured[m]["kafka"], Note: notes[m],
			Limit: lim.limitFor(m, units[m][0], o.durability)}
		if r.Kafka != 0 {
			r.Ratio = r.Gregor / r.Kafka
		}
		results = append(results, r)
	}
	printTable(results, o)
	return writeResults(outDir, results, o, lim)
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("compare: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// peakRSS is the broker process's high-water resident set (VmHWM), in MiB.
func peakRSS(pidFile string) (float64, error) {
	pid, err := readPid(pidFile)
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("compare: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0, fmt.Errorf("compare: VmHWM %q: %w", l, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("compare: no VmHWM in /proc/%d/status", pid)
}

// sumPeakRSS adds the nodes' peak RSS.
func sumPeakRSS(pidFiles []string) (float64, error) {
	var sum float64
	for _, f := range pidFiles {
		rss, err := peakRSS(f)
		if err != nil {
			return 0, err
		}
		sum += rss
	}
	return sum, nil
}

func printTable(rs []Result, o options) {
	fmt.Printf("\nGregor vs Apache Kafka on %d cores (%s durability; ratio = Gregor / Kafka)\n\n", runtime.NumCPU(), o.durability)
	fmt.Printf("| %-52s | %-9s | %12s | %12s | %7s | %10s |\n", "metric", "unit", "Gregor", "Kafka", "ratio", "limit")
	fmt.Printf("|%s|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 54), strings.Repeat("-", 11), strings.Repeat("-", 14), strings.Repeat("-", 14), strings.Repeat("-", 9), strings.Repeat("-", 12))
	for _, r := range rs {
		ratio := "n/a"
		if r.Ratio != 0 {
			ratio = fmt.Sprintf("%.2f", r.Ratio)
		}
		name := r.Metric + " (" + r.Better + " is better)"
		fmt.Printf("| %-52s | %-9s | %12s | %12s | %7s | %10s |\n", name, r.Unit, num(r.Gregor), num(r.Kafka), ratio, num(r.Limit))
		if r.Note != "" {
			fmt.Printf("|   note: %s\n", r.Note)
		}
	}
	writeCurveTables(os.Stdout, rs)
	if o.elapsed > 0 {
		fmt.Printf("\nThe run took %.0f s.\n", o.elapsed.Seconds())
	}
	if o.cluster {
		fmt.Printf("\n\"%s\" rows: 3 brokers on loopback on this machine, topics RF=3 with min.insync.replicas=2,\n"+
			"idempotent acks=all producer, incompressible random values without compression (every byte is replicated);\n"+
			"throughput on %d partitions, latency at %d records/s on %d partitions.\n",
			strings.TrimSuffix(clusterPrefix, ": "), clusterPartitions, clusterLatencyRate, clusterNodes)
	}
}

func num(v float64) string {
	switch {
	case v == 0:
		return "–"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func writeResults(dir string, rs []Result, o options, lim limits) error {
	facts := machineFacts()
	facts["durability"] = o.durability
	facts["durability_meaning"] = map[string]string{
		"page_cache": "Gregor durability=page_cache; Kafka defaults (no fsync per write): acknowledged data is in the page cache",
		"fsync":      "Gregor durability=fsync (group commit before the ack); Kafka log.flush.interval.messages=1",
	}[o.durability]
	facts["scale"] = o.scale
	facts["run_seconds"] = int(o.elapsed.Seconds())
	if o.restartOn {
		facts["restart_section"] = map[string]any{"idle_partitions": o.restart.partitions, "startup_mb": o.restart.dataMB,
			"recovery_mb": o.restart.recoveryMB, "recovery_tail_mb": recoveryTailMB, "recovery_segment_bytes": restartSegmentBytes,
			"checkpoint_interval_ms": restartCheckpointMs}
	}
	facts["repeat"] = o.repeat
	facts["single_node_section"], facts["cluster_section"] = o.single, o.cluster
	if o.cluster {
		facts["cluster"] = "3 brokers on loopback, each a controller voter and a broker; topics RF=3, min.insync.replicas=2; acks=all (idempotent franz-go producer); incompressible random values keyed over 10,000 keys, no compression"
	}
	facts["client"] = "franz-go (linger 5 ms, 1 MiB batches; incompressible random values keyed by 10,000 random keys without compression, and 1 KB JSON event values compressed with lz4 and with zstd); latency measured from the intended send time; Kafka's ProducerPerformance/ConsumerPerformance from the " + envOr("KAFKA_VERSION", "4.4.0") + " jars"
	facts["physical_limits"] = lim
	facts["settings"] = settings(o)
	doc := map[string]any{"when": time.Now().UTC(), "machine": facts, "results": rs}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("compare-%s-%s.json", o.durability, time.Now().UTC().Format("20060102-150405")))
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	fmt.Printf("\ncompare: wrote %s\n", path)
	return nil
}

func machineFacts() map[string]any {
	f := map[string]any{"cores": runtime.NumCPU(), "go": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				f["cpu"] = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f["memory"] = strings.TrimSpace(strings.TrimPrefix(strings.Split(string(b), "\n")[0], "MemTotal:"))
	}
	out := func(args ...string) string {
		b, _ := exec.Command(args[0], args[1:]...).CombinedOutput()
		return strings.TrimSpace(strings.Split(string(b), "\n")[0])
	}
	f["kernel"] = out("uname", "-r")
	f["java"] = out("java", "-version")
	f["gregor_commit"] = out("git", "rev-parse", "--short", "HEAD")
	f["kafka_version"] = envOr("KAFKA_VERSION", "4.4.0")
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f["load_average_at_end"] = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return f
}

// cacheDir is where the start scripts keep their run directories (GREGOR_CACHE, as they read it).
func cacheDir(rel string) string {
	return filepath.Join(envOr("GREGOR_CACHE", ".cache"), rel)
}

// settings lists how the two brokers are configured for the run: what both are given alike and
// every difference that remains, so that a reader can judge each ratio.
func settings(o options) map[string][]string {
	same := []string{
		"group initial rebalance delay 0 ms (Kafka group.initial.rebalance.delay.ms=0; Gregor groups.group_initial_rebalance_delay_ms=0)",
		"__consumer_offsets and __transaction_state with 3 partitions each",
		"plain-text listener on loopback, no authentication, no authorizer",
		"the same client, client settings and records for both",
		fmt.Sprintf("open-file limit %d where the run may raise it (root), else the hard limit", wantNoFile),
	}
	diff := []string{
		"Kafka runs in a JVM with a fixed heap (1 GiB single node, 512 MiB per node of a cluster, G1GC); Gregor's Go runtime sizes its heap itself",
		"Kafka's default thread pools (num.network.threads=3, num.io.threads=8); Gregor serves each connection on its own goroutines",
	}
	if o.durability == "fsync" {
		same = append(same, "every append reaches the disk before the acknowledgement (Kafka log.flush.interval.messages=1; Gregor log.durability=fsync, which groups concurrent appends into one fsync)")
	} else {
		same = append(same, "acknowledged data is in the page cache, no fsync per write (Kafka's defaults; Gregor log.durability=page_cache)")
	}
	if o.restartOn {
		same = append(same, fmt.Sprintf("restart section: recovery points written every %d ms (Kafka log.flush.offset.checkpoint.interval.ms; Gregor log.flush_offset_checkpoint_interval_ms), recovery topic segment.bytes=%d", restartCheckpointMs, restartSegmentBytes))
		diff = append(diff, "a rolled segment is fsynced at once by Kafka (an asynchronous flush-log task), within log.flush_scheduler_interval_ms (1 s) by Gregor's flush scheduler")
	}
	return map[string][]string{"same": same, "different": diff}
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// percentile of sorted durations in milliseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p * float64(len(sorted)-1))
	return float64(sorted[i].Microseconds()) / 1000
}

func sortDurations(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }
