// Command runner is Gregor's interop matrix: it runs the same scenario list with every client
// driver (Java kafka-clients, kcat/librdkafka, confluent-kafka-python, kafkajs, franz-go,
// segmentio/kafka-go, IBM/sarama) against one target broker, Gregor or Apache Kafka, and writes
// a client × scenario table to interop/RESULTS.md plus JSON under interop/results/.
//
// It owns the orchestration only: installing the external clients and starting the brokers is
// done by interop/interop.mk and scripts/. Scenarios whose APIs the target does not advertise
// are reported as "skip (not implemented)" without running a client. It exits 1 on any fail.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Env is what every driver is told about the target.
type Env struct {
	Bootstrap     string
	SASLBootstrap string
	// SSLBootstrap and SASLSSLBootstrap are the TLS listeners, whose certificates CAFile signed.
	SSLBootstrap, SASLSSLBootstrap string
	CAFile                         string
	Prefix                         string // topic, group and transactional-id prefix, unique per run and client
	User, Pass                     string
	// ReplicationFactor is what every topic the drivers create asks for (0 means 1): 3 against
	// a 3-node cluster, so the scenarios run on replicated partitions.
	ReplicationFactor int16
}

// rf is the replication factor the drivers create topics with.
func (e Env) rf() int16 { return max(e.ReplicationFactor, 1) }

// errSkip marks a scenario the client itself cannot express (not the target's fault).
type errSkip struct{ reason string }

func (e errSkip) Error() string { return e.reason }

func skipf(format string, a ...any) error { return errSkip{fmt.Sprintf(format, a...)} }

func main() {
	var (
		target    = flag.String("target", "gregor", "name of the target in the results (gregor or kafka)")
		bootstrap = flag.String("bootstrap", "127.0.0.1:28092", "PLAINTEXT bootstrap servers")
		sasl      = flag.String("sasl-bootstrap", "", "SASL_PLAINTEXT bootstrap (default: --bootstrap)")
		ssl       = flag.String("ssl-bootstrap", "", "SSL bootstrap (default: none, the ssl scenario is skipped)")
		saslSSL   = flag.String("sasl-ssl-bootstrap", "", "SASL_SSL bootstrap (default: none, the sasl_ssl scenario is skipped)")
		caFile    = flag.String("ca-file", ".cache/interop-tls/ca.pem", "PEM CA that signed the TLS listeners' certificates")
		clients   = flag.String("clients", "", "comma-separated clients (default: all, or the smoke set with --smoke)")
		scens     = flag.String("scenarios", "", "comma-separated scenarios (default: all, or the smoke set)")
		smoke     = flag.Bool("smoke", false, "run the CI smoke subset")
		dir       = flag.String("dir", "interop", "interop directory (drivers, RESULTS.md, results/)")
		cache     = flag.String("cache", ".cache/interop", "where the external clients were installed")
		perScen   = flag.Duration("scenario-timeout", 90*time.Second, "time limit of one scenario for one client")
		user      = flag.String("sasl-user", "interop", "SASL user")
		pass      = flag.String("sasl-password", "interop-secret", "SASL password")
		rf        = flag.Int("replication-factor", 1, "replication factor of the topics the drivers create (3 against a 3-node cluster)")
		render    = flag.Bool("render", false, "only rewrite RESULTS.md from results/*.json and results/*.notes.md, run nothing")
	)
	flag.Parse()
	if *render {
		if err := writeMarkdown(filepath.Join(*dir, "RESULTS.md"), filepath.Join(*dir, "results")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *sasl == "" {
		*sasl = *bootstrap
	}
	if *rf < 1 || *rf > 32767 {
		fmt.Fprintf(os.Stderr, "interop: --replication-factor %d is not in [1, 32767]\n", *rf)
		os.Exit(2)
	}
	sec := securityTargets{SSL: *ssl, SASLSSL: *saslSSL, CAFile: mustAbs(*caFile)}
	if err := run(*target, *bootstrap, *sasl, sec, *clients, *scens, *smoke, *dir, *cache, *perScen, *user, *pass, int16(*rf)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(target, bootstrap, sasl string, sec securityTargets, clientList, scenList string, smoke bool, dir, cache string,
	perScen time.Duration, user, pass string, rf int16) error {
	start := time.Now()
	caps, err := probe(bootstrap, sasl, sec)
	if err != nil {
		return fmt.Errorf("interop: target %s at %s is not answering: %w", target, bootstrap, err)
	}
	r := &Run{Target: target, Bootstrap: bootstrap, Started: start, Smoke: smoke, APIs: map[string][2]int16{},
		Mechanisms: caps.Mechanisms, Cells: map[string]map[string]Cell{}, ReplicationFactor: rf}
	for k, v := range caps.Versions {
		r.APIs[fmt.Sprintf("%d %s", k, apiName(k))] = v
	}
	for _, c := range Clients {
		if (clientList == "" && (!smoke || c.Smoke)) || inList(clientList, c.Name) {
			r.Clients = append(r.Clients, c.Name)
		}
	}
	var chosen []Scenario
	for _, s := range Scenarios {
		if (scenList == "" && (!smoke || s.Smoke)) || inList(scenList, s.Name) {
			chosen = append(chosen, s)
			r.Scenarios = append(r.Scenarios, s.Name)
		}
	}
	for _, name := range splitList(clientList) {
		if !inClients(name) {
			return fmt.Errorf("interop: unknown client %q", name)
		}
	}
	for _, name := range splitList(scenList) {
		if _, ok := scenarioByName(name); !ok {
			return fmt.Errorf("interop: unknown scenario %q", name)
		}
	}
	runID := fmt.Sprintf("%x", start.UnixNano()/1e6%0xffffff)
	fmt.Printf("interop: target %s (%s), %d clients × %d scenarios, replication factor %d, run %s\n", target, bootstrap,
		len(r.Clients), len(chosen), rf, runID)
	for _, client := range r.Clients {
		env := Env{Bootstrap: bootstrap, SASLBootstrap: sasl, SSLBootstrap: sec.SSL, SASLSSLBootstrap: sec.SASLSSL,
			CAFile: sec.CAFile, User: user, Pass: pass, ReplicationFactor: rf,
			Prefix: "it-" + runID + "-" + strings.ReplaceAll(client, "-", "")}
		var todo []string
		for _, s := range chosen {
			if why := s.missing(caps); why != "" {
				r.set(client, s.Name, Cell{Status: Skip, Detail: why})
				continue
			}
			todo = append(todo, s.Name)
		}
		if len(todo) == 0 {
			continue
		}
		if d, ok := goDrivers[client]; ok {
			for _, sc := range todo {
				r.set(client, sc, runGo(d, env, sc, perScen))
				printCell(client, sc, r.Cells[client][sc])
			}
			continue
		}
		cells := runExternal(client, env, caps, todo, dir, cache, perScen)
		for _, sc := range todo {
			r.set(client, sc, cells[sc])
		}
	}
	r.DurationMs = time.Since(start).Milliseconds()
	name := target
	if smoke {
		name += "-smoke"
	}
	if err := writeJSON(filepath.Join(dir, "results", name+".json"), r); err != nil {
		return err
	}
	if err := writeMarkdown(filepath.Join(dir, "RESULTS.md"), filepath.Join(dir, "results")); err != nil {
		return err
	}
	p, f, s := r.counts()
	fmt.Printf("interop: target %s done in %.0f s (table in %s)\n", target, time.Since(start).Seconds(), filepath.Join(dir, "RESULTS.md"))
	// The closing line in the plain "N passed, N failed" form CI readers recognise.
	fmt.Printf("interop: %d passed, %d failed, %d skipped\n", p, f, s)
	if f > 0 {
		return fmt.Errorf("interop: %d cell(s) failed", f)
	}
	return nil
}

func printCell(client, scenario string, c Cell) {
	d := c.Detail
	if len(d) > 300 {
		d = d[:300] + "…"
	}
	fmt.Printf("  %-9s %-18s %-4s %5.1fs %s\n", client, scenario, c.Status, float64(c.DurationMs)/1000, d)
}

// runGo runs one scenario of an in-process Go driver with a deadline.
func runGo(d goDriver, env Env, scenario string, limit time.Duration) Cell {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	err := d(ctx, env, scenario)
	c := Cell{Status: Pass, DurationMs: time.Since(start).Milliseconds()}
	var sk errSkip
	switch {
	case errors.As(err, &sk):
		c.Status, c.Detail = Skip, sk.reason
	case err != nil:
		c.Status, c.Detail = Fail, err.Error()
	}
	return c
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func inList(list, name string) bool {
	for _, x := range splitList(list) {
		if x == name {
			return true
		}
	}
	return false
}

func inClients(name string) bool {
	for _, c := range Clients {
		if c.Name == name {
			return true
		}
	}
	return false
}
