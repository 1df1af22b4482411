package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/gregorbroker/gregor/mirror"
)

const mirrorLong = `Mirror topics, configs, ACLs and consumer group offsets from one cluster to another.

The configuration (--config, TOML) names the source and target clusters, the topics
and groups to mirror and the mode:

  copy  re-produce records to any Kafka cluster; group offsets are translated exactly
        through offset syncs kept on the target (<source>.offset-syncs.internal)
  link  copy record batches byte for byte so that target offsets equal source offsets

Checkpoints (<source>.checkpoints.internal) and heartbeats (heartbeats) use
MirrorMaker 2's formats. A restarted mirror resumes from what the target holds,
without loss or duplicates. SIGINT or SIGTERM stops it.`

const mirrorExample = `  # Run a mirror, with metrics on :9645 and a progress line while catching up
  gregor mirror --config examples/mirror-copy/mirror.toml --metrics-addr 127.0.0.1:9645 --progress

  # Show how far each partition is, read from both clusters
  gregor mirror status --config mirror.toml

  # Failover: stop mirroring east.orders so that the target owns it
  gregor mirror promote east.orders --config mirror.toml`

func newMirrorCmd() *cobra.Command {
	var configPath, metricsAddr, logLevel, logFormat string
	var progress bool
	cmd := &cobra.Command{
		Use:     "mirror",
		Short:   "Mirror topics and group offsets between clusters",
		Long:    mirrorLong,
		Example: mirrorExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath == "" {
				return usagef("--config is required")
			}
			logger, err := newLogger(cmd, logLevel, logFormat)
			if err != nil {
				return usageError{err}
			}
			cfg, err := mirror.Load(configPath)
			if err != nil {
				return err
			}
			reg := prometheus.NewRegistry()
			m, err := mirror.New(cfg, mirror.RunOptions{Logger: logger, Registerer: reg})
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			if metricsAddr != "" {
				stop, err := serveMetrics(metricsAddr, reg, m)
				if err != nil {
					return err
				}
				defer stop()
			}
			if progress {
				go showProgress(ctx, cmd.ErrOrStderr(), m)
			}
			return m.Run(ctx)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "path of the mirror configuration (TOML)")
	cmd.Flags().StringVar(&metricsAddr, "metrics-addr", "", "serve /metrics and /status (JSON) on this address")
	cmd.Flags().BoolVar(&progress, "progress", false, "print a progress line every second while there is lag")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.Flags().StringVar(&logFormat, "log-format", "text", "log format: text or json")
	cmd.AddCommand(newMirrorStatusCmd(), newMirrorPromoteCmd())
	return cmd
}

// serveMetrics serves the mirror's metrics and status until stop is called.
func serveMetrics(addr string, reg *prometheus.Registry, m *mirror.Mirror) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(m.Status())
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// showProgress reports the mirror's catch-up on w until ctx ends: a bar
// redrawn in place when w is a terminal, else a summary line every second
// while there is lag or the mirror is still resuming, and once when it
// catches up.
func showProgress(ctx context.Context, w io.Writer, m *mirror.Mirror) {
	tty := isTerminal(w)
	interval := time.Second
	if tty {
		interval = progressTTYInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	mp := newMirrorProgress(w, tty, nil)
	for {
		select {
		case <-ctx.Done():
			mp.end()
			return
		case <-t.C:
		}
		mp.report(m.Status(), interval)
	}
}

// mirrorProgress turns successive mirror.Status snapshots into progress
// output.
type mirrorProgress struct {
	p           *progress
	lastRecords int64
	caughtUp    bool
	reported    bool
}

func newMirrorProgress(w io.Writer, tty bool, now func() time.Time) *mirrorProgress {
	return &mirrorProgress{p: newProgress(w, tty, "mirror", "records", now)}
}

// report shows st, taken interval after the previous snapshot.
func (mp *mirrorProgress) report(st mirror.Status, interval time.Duration) {
	var records int64
	for _, p := range st.Partitions {
		records += p.Records
	}
	lag := st.Lag()
	quiet := lag == 0 && mp.caughtUp && records == mp.lastRecords
	if mp.p.tty {
		// The bar measures this run's copying against what is left:
		// full when the lag is gone.
		if !quiet || !mp.reported {
			mp.p.label = "mirror " + st.Name
			mp.p.update(records, records+lag, fmt.Sprintf("lag %d", lag))
		}
	} else if !quiet {
		rate := records - mp.lastRecords
		if interval > 0 && interval != time.Second {
			rate = int64(float64(rate) / interval.Seconds())
		}
		fmt.Fprintf(mp.p.w, "%s, %d records/s\n", st, rate)
	}
	mp.reported = true
	mp.lastRecords, mp.caughtUp = records, lag == 0
}

// end finishes a terminal line so that later output starts on its own.
func (mp *mirrorProgress) end() {
	if mp.p.tty && mp.p.drawn > 0 {
		fmt.Fprintln(mp.p.w)
	}
}

func newMirrorStatusCmd() *cobra.Command {
	var configPath string
	var asJSON bool
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each mirrored partition's position and lag, read from both clusters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath == "" {
				return usagef("--config is required")
			}
			if asJSON {
				if cmd.Flags().Changed("output") && output.format != outputJSON {
					return usagef("--json and --output %s disagree; give one of them", output.format)
				}
				output.format = outputJSON
			}
			if err := output.check(); err != nil {
				return err
			}
			cfg, err := mirror.Load(configPath)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			st, err := mirror.ReadStatus(ctx, cfg)
			if err != nil {
				return err
			}
			if output.structured() {
				return output.write(cmd.OutOrStdout(), mirrorStatusView(st))
			}
			printMirrorStatus(cmd.OutOrStdout(), st)
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "path of the mirror configuration (TOML)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (the same as --output json)")
	output = addOutputFlag(cmd)
	return cmd
}

func printMirrorStatus(w io.Writer, st mirror.ClusterStatus) {
	fmt.Fprintf(w, "mirror %s (%s mode)\n", st.Name, st.Mode)
	if st.LastHeartbeat.IsZero() {
		fmt.Fprintln(w, "last heartbeat: none")
	} else {
		fmt.Fprintf(w, "last heartbeat: %s\n", st.LastHeartbeat.UTC().Format(time.RFC3339))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tTARGET\tPOSITION\tSOURCE END\tLAG\tSTATE\tLAST WRITE")
	for _, p := range st.Partitions {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\n", p.Topic, p.Partition, p.TargetTopic, p.Position, p.SourceEnd, p.Lag, p.State,
			timeOrDash(p.LastWrite))
	}
	tw.Flush()
	fmt.Fprintf(w, "total lag: %d\n", st.Lag())
	for _, p := range st.Partitions {
		switch {
		case p.State == mirror.StateFailing:
			retry := "not retried: the error recurs until its cause is fixed"
			if !p.RetryAt.IsZero() {
				retry = "retry at " + timeOrDash(p.RetryAt)
			}
			fmt.Fprintf(w, "FAILING %s[%d] since %s (%d failures, %s): %s\n", p.Topic, p.Partition, timeOrDash(p.FailedAt),
				p.Failures, retry, p.Error)
		case p.Error != "":
			fmt.Fprintf(w, "reported %s[%d]: %s\n", p.Topic, p.Partition, p.Error)
		}
		if p.TooLarge > 0 {
			fmt.Fprintf(w, "skipped %s[%d]: %d records larger than the target accepts\n", p.Topic, p.Partition, p.TooLarge)
		}
	}
	if len(st.Promoted) > 0 {
		fmt.Fprintf(w, "promoted: %v\n", st.Promoted)
	}
	names := make([]string, 0, len(st.Skipped))
	for t := range st.Skipped {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		fmt.Fprintf(w, "not mirrored: %s (%s)\n", t, st.Skipped[t])
	}
}

// timeOrDash is t in RFC 3339 (UTC), or "-" when zero.
func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func newMirrorPromoteCmd() *cobra.Command {
	var configPath string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "promote TARGET_TOPIC...",
		Short: "Stop mirroring target topics so that the target owns them (failover)",
		Long: `Record on the target that the named target topics are promoted. A running mirror
stops writing them within its checkpoint interval and confirms with the end offsets
it left; promote waits --wait for that confirmation. A mirror that is not running
skips promoted topics when it starts. In link mode promote then deletes the topics'
gregor.mirror.link config, which makes them writable at once and fences the link
whether or not a mirror confirmed. Consumers on the target resume from their
groups' synced offsets.`,
		Args: argsAtLeastOne("TARGET_TOPIC"),
		RunE: func(cmd *cobra.Command, topics []string) error {
			if configPath == "" {
				return usagef("--config is required")
			}
			cfg, err := mirror.Load(configPath)
			if err != nil {
				return err
			}
			confirmed, err := mirror.Promote(cmd.Context(), cfg, topics, wait, nil)
			if err != nil {
				return err
			}
			var missing []string
			for _, t := range topics {
				ends, ok := confirmed[t]
				if !ok {
					missing = append(missing, t)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "promoted %s (end offsets %v)\n", t, ends)
			}
			if len(missing) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "promotion recorded but not confirmed by a running mirror within %s: %v\n", wait, missing)
				if cfg.Mirror.Mode == mirror.ModeLink {
					// The target refuses the link's appends from now on.
					fmt.Fprintf(cmd.OutOrStdout(), "writable now: %v\n", missing)
					return nil
				}
				if wait > 0 {
					return errors.New("no running mirror confirmed the promotion; it takes effect when the mirror next runs")
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "path of the mirror configuration (TOML)")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for a running mirror to confirm (0: do not wait)")
	return cmd
}
