package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
)

// benchCase is one produce/consume measurement.
type benchCase struct {
	Size       int    `json:"record_bytes"`
	Partitions int32  `json:"partitions"`
	Acks       string `json:"acks"`
}

// benchResult is what one case measured.
type benchResult struct {
	Security string `json:"security"`
	benchCase
	Records          int     `json:"records"`
	ProduceRecordsPS float64 `json:"produce_records_per_sec"`
	ProduceMBPS      float64 `json:"produce_mb_per_sec"`
	P50Ms            float64 `json:"produce_p50_ms"`
	P99Ms            float64 `json:"produce_p99_ms"`
	ConsumeRecordsPS float64 `json:"consume_records_per_sec"`
	ConsumeMBPS      float64 `json:"consume_mb_per_sec"`
}

func newBenchCmd() *cobra.Command {
	var (
		bootstrap  string
		records    int
		sizes      []int
		partitions []int32
		acks       []string
		jsonOut    string
		durability string
		security   []string
		txnEvery   []int
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure produce and consume throughput and produce latency",
		Long: `Measure produce and consume throughput (records/s, MB/s) and produce latency
(p50/p99 from send to acknowledgement) with a real Kafka client (franz-go).

Without --bootstrap, bench starts a broker in this process on a temporary data
directory and loopback ports, with the durability given by --durability. Each
case writes --records records to a fresh topic and reads them back. A second
table shows a transactional producer committing every --txn-commit-every
records, next to the idempotent acks=all throughput of the same case.`,
		Example: `  gregor bench
  gregor bench --records 200000 --sizes 100 --partitions 6 --acks all
  gregor bench --bootstrap 127.0.0.1:9092 --json bench.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, a := range acks {
				if a != "1" && a != "all" {
					return usagef("--acks %q: want 1 or all", a)
				}
			}
			if records < 1 {
				return usagef("--records must be positive")
			}
			secs, err := parseBenchSecurity(security)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			targets := []benchTarget{{Security: benchPlaintext, Addr: bootstrap}}
			if bootstrap == "" {
				var stop func()
				targets, stop, err = startBenchBroker(ctx, durability, secs)
				if err != nil {
					return err
				}
				defer stop()
				fmt.Fprintf(out, "in-process broker at %s, durability=%s, GOMAXPROCS=%d\n", targets[0].Addr, durability, runtime.GOMAXPROCS(0))
			} else if len(secs) != 1 || secs[0] != benchPlaintext {
				return usagef("--security measures the in-process broker's listeners; against --bootstrap it is plaintext")
			}
			var results []benchResult
			for _, size := range sizes {
				for _, parts := range partitions {
					for _, a := range acks {
						for _, target := range targets {
							c := benchCase{Size: size, Partitions: parts, Acks: a}
							res, err := runBenchCase(ctx, cmd.ErrOrStderr(), target, c, records)
							if err != nil {
								return fmt.Errorf("bench %s %d B, %d partitions, acks=%s: %w", target.Security, size, parts, a, err)
							}
							results = append(results, res)
						}
					}
				}
			}
			printBench(out, results)
			txnResults, err := runTxnBench(ctx, targets[0], sizes, partitions, txnEvery, records, results)
			if err != nil {
				return err
			}
			printTxnBench(out, txnResults)
			if jsonOut != "" {
				data, _ := json.MarshalIndent(map[string]any{
					"time": time.Now().UTC().Format(time.RFC3339), "goos": runtime.GOOS, "goarch": runtime.GOARCH,
					"cpus": runtime.NumCPU(), "durability": durability, "results": results,
					"transactions": txnResults,
				}, "", "  ")
				if err := os.WriteFile(jsonOut, append(data, '\n'), 0o644); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&bootstrap, "bootstrap", "", "broker to measure (default: start one in-process)")
	cmd.Flags().IntVar(&records, "records", 100000, "records per case")
	cmd.Flags().IntSliceVar(&sizes, "sizes", []int{100, 1024}, "record value sizes in bytes")
	cmd.Flags().Int32SliceVar(&partitions, "partitions", []int32{1, 6}, "partition counts")
	cmd.Flags().StringSliceVar(&acks, "acks", []string{"1", "all"}, "acks settings: 1, all")
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the results as JSON to this file")
	cmd.Flags().IntSliceVar(&txnEvery, "txn-commit-every", []int{100, 1000},
		"also measure a transactional producer committing every N records (0: skip)")
	cmd.Flags().StringVar(&durability, "durability", config.DurabilityFsync, "durability of the in-process broker: fsync or page_cache")
	cmd.Flags().StringSliceVar(&security, "security", []string{benchPlaintext},
		"listeners of the in-process broker to measure, each case on each: plaintext, ssl (TLS 1.2+), sasl_ssl (SCRAM-SHA-512 over TLS)")
	return cmd
}

func startBenchBroker(ctx context.Context, durability string, secs []string) ([]benchTarget, func(), error) {
	dir, err := os.MkdirTemp("", "gregor-bench-")
	if err != nil {
		return nil, nil, err
	}
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = ""
	cfg.Log.Durability = durability
	clientTLS, err := benchSecurityConfig(&cfg, dir, secs)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	srv, err := server.New(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	stop := func() {
		cancel()
		<-done
		os.RemoveAll(dir)
	}
	targets, err := benchTargets(ctx, srv.KafkaAddr(), srv.ListenerAddr, clientTLS, secs)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return targets, stop, nil
}

// runBenchCase measures one case; while it runs, a progress bar of each
// phase is drawn on stderr when that is a terminal.
func runBenchCase(ctx context.Context, stderr io.Writer, target benchTarget, c benchCase, n int) (benchResult, error) {
	res := benchResult{Security: target.Security, benchCase: c, Records: n}
	bootstrap := target.Addr
	topic := fmt.Sprintf("bench-%d-%d-%s-%d", c.Size, c.Partitions, c.Acks, time.Now().UnixNano())
	admin, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap)}, target.Opts...)...)
	if err != nil {
		return res, err
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	created, err := adm.CreateTopic(ctx, c.Partitions, 1, nil, topic)
	if err == nil {
		err = created.Err
	}
	if err != nil {
		return res, fmt.Errorf("create topic: %w", err)
	}
	defer adm.DeleteTopics(context.Background(), topic)

	opts := append([]kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchMaxBytes(1 << 20), kgo.MaxBufferedRecords(1 << 16)}, target.Opts...)
	if c.Acks == "1" {
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	} else {
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	prod, err := kgo.NewClient(opts...)
	if err != nil {
		return res, err
	}
	value := make([]byte, c.Size)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	var firstErr error
	var errMu sync.Mutex
	label := fmt.Sprintf("bench %s %d B, %d partitions, acks=%s", target.Security, c.Size, c.Partitions, c.Acks)
	var acked counter
	stop := startProgress(stderr, label+": produce", "records", int64(n), &acked)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		sent := time.Now()
		idx := i
		rec := &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: value}
		prod.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			lat[idx] = time.Since(sent)
			if err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
			}
			acked.add(1)
			wg.Done()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stop()
	prod.Close()
	if firstErr != nil {
		return res, fmt.Errorf("produce: %w", firstErr)
	}
	bytes := float64(n * (c.Size + 6))
	res.ProduceRecordsPS = float64(n) / elapsed.Seconds()
	res.ProduceMBPS = bytes / elapsed.Seconds() / 1e6
	slices.Sort(lat)
	res.P50Ms = float64(lat[n/2].Microseconds()) / 1000
	res.P99Ms = float64(lat[n*99/100].Microseconds()) / 1000

	cons, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64 << 20)}, target.Opts...)...)
	if err != nil {
		return res, err
	}
	defer cons.Close()
	got := 0
	var read counter
	stop = startProgress(stderr, label+": consume", "records", int64(n), &read)
	defer stop()
	start = time.Now()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for got < n {
		fs := cons.PollFetches(cctx)
		if err := cctx.Err(); err != nil {
			return res, fmt.Errorf("consume: %d of %d records: %w", got, n, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return res, fmt.Errorf("consume: %w", ferr)
		}
		got += fs.NumRecords()
		read.add(int64(fs.NumRecords()))
	}
	elapsed = time.Since(start)
	stop()
	res.ConsumeRecordsPS = float64(n) / elapsed.Seconds()
	res.ConsumeMBPS = bytes / elapsed.Seconds() / 1e6
	return res, nil
}

func printBench(w io.Writer, results []benchResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "security\tsize\tpartitions\tacks\trecords\tproduce rec/s\tproduce MB/s\tp50 ms\tp99 ms\tconsume rec/s\tconsume MB/s\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%.0f\t%.1f\t%.2f\t%.2f\t%.0f\t%.1f\t\n", r.Security, r.Size, r.Partitions, r.Acks, r.Records,
			r.ProduceRecordsPS, r.ProduceMBPS, r.P50Ms, r.P99Ms, r.ConsumeRecordsPS, r.ConsumeMBPS)
	}
	tw.Flush()
}
