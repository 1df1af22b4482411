package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/plugins"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// maxKeyLine bounds one line of `extension test` input.
const maxKeyLine = 1 << 20

// extFlags are shared by the extension subcommands that open an extension:
// a WebAssembly module (--wasm) or a go-plugin binary (--exec).
type extFlags struct {
	wasm        string
	exec        string
	args        []string
	config      string
	timeout     time.Duration
	memoryPages uint32
}

func (f *extFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.wasm, "wasm", "", "a WebAssembly module (this or --exec is required)")
	cmd.Flags().StringVar(&f.exec, "exec", "", "a go-plugin binary built with sdk/plugin (this or --wasm is required)")
	cmd.Flags().StringArrayVar(&f.args, "arg", nil, "an argument for the --exec binary (repeatable)")
	cmd.Flags().StringVar(&f.config, "config", "{}", "the extension's configuration, a JSON object")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 0, "time limit per call (0: the broker's default, 1s for a module, 2s for a plugin)")
	cmd.Flags().Uint32Var(&f.memoryPages, "memory-pages", hooks.DefaultMemoryLimitPages, "a module's memory limit in 64 KiB pages")
}

// settings checks the flags common to both hosts and returns the
// configuration and the call limit the broker would use.
func (f *extFlags) settings() ([]byte, time.Duration, error) {
	switch {
	case f.wasm == "" && f.exec == "":
		return nil, 0, usagef("--wasm or --exec is required")
	case f.wasm != "" && f.exec != "":
		return nil, 0, usagef("--wasm and --exec exclude each other")
	case f.wasm != "" && len(f.args) > 0:
		return nil, 0, usagef("--arg is only for --exec")
	case f.timeout < 0:
		return nil, 0, usagef("--timeout must not be negative")
	}
	cfg := []byte(strings.TrimSpace(f.config))
	if !bytes.HasPrefix(cfg, []byte("{")) {
		return nil, 0, usagef("--config must be a JSON object, got %q", f.config)
	}
	// The same resolution as for an [extensions.NAME] with this timeout_ms.
	timeout := extension.CallTimeout(config.Extension{WASM: f.wasm, Exec: f.exec, TimeoutMs: f.timeout.Milliseconds()})
	return cfg, timeout, nil
}

// options are the WASM host's options for the flags.
func (f *extFlags) options() (hooks.Options, error) {
	cfg, timeout, err := f.settings()
	if err != nil {
		return hooks.Options{}, err
	}
	if f.wasm == "" {
		return hooks.Options{}, usagef("--wasm is required (this command reads WebAssembly modules)")
	}
	o := hooks.Options{Config: cfg, CallTimeout: timeout, MemoryLimitPages: f.memoryPages, MaxInstances: 1, Stderr: os.Stderr}
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// cliPartitioner is a partitioner from either host.
type cliPartitioner interface {
	partitioner.BatchPartitioner
	PartitionBatchContext(ctx context.Context, records []partitioner.Record, numPartitions int32, out []int32) error
}

// openPartitioner opens the partitioner the flags name, in the host the
// broker would run it in, and returns it with its closer.
func (f *extFlags) openPartitioner(ctx context.Context, stderr io.Writer) (cliPartitioner, func(), error) {
	cfg, timeout, err := f.settings()
	if err != nil {
		return nil, nil, err
	}
	if f.exec != "" {
		p, err := plugins.OpenPartitioner(plugins.Config{
			Name: "cli", Kind: config.KindPartitioner, Path: f.exec, Args: f.args, ConfigJSON: cfg, CallTimeout: timeout,
			Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		if err != nil {
			return nil, nil, err
		}
		return p, func() { p.Close() }, nil
	}
	o, err := f.options()
	if err != nil {
		return nil, nil, err
	}
	p, err := hooks.LoadPartitioner(ctx, f.wasm, o)
	if err != nil {
		return nil, nil, err
	}
	return p, func() { p.Close(context.WithoutCancel(ctx)) }, nil
}

// newExtensionCmd is `gregor extension`, also called `gregor plugin`.
func newExtensionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "extension",
		Aliases: []string{"plugin"},
		Short:   "Test, benchmark and inspect extensions: WebAssembly modules and go-plugin binaries",
		Long: `Work with Gregor's extensions without a broker, in the same hosts the broker
runs them in: WebAssembly modules (--wasm, see hooks/ABI.md) and go-plugin
binaries built with sdk/plugin (--exec). Place keys with a partitioner and
measure its cost per record against the built-in murmur2 partitioner, for
either kind, or list what a module exports. "gregor plugin" is an alias.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newExtensionTestCmd(), newExtensionBenchCmd(), newExtensionInspectCmd())
	return cmd
}

func newExtensionTestCmd() *cobra.Command {
	var (
		f          extFlags
		icf        interceptFlags
		partitions int32
		headers    []string
		batch      int
	)
	cmd := &cobra.Command{
		Use:   "test (--wasm FILE | --exec FILE) (--partitions N | --intercept produce|fetch)",
		Short: "Place keys with a partitioner, or pass records through an interceptor, read from stdin",
		Long: `Read keys from stdin, one per line, place them with the partitioner (a
WebAssembly module or a go-plugin binary) and print "key<TAB>partition" for
each, in order. The extension runs in the same host the broker uses, with the
same limits and checks. --header adds a header to every record (for
partitioners that route by header).

With --intercept, the extension is a record interceptor and stdin holds
records as JSON lines: {"key": ..., "value": ..., "headers": {"h": "v"},
"timestamp": MS}, where a key or value is null when absent, the text of a
JSON string, the JSON text of any other value, or base64 in key_b64 and
value_b64. Records go to the interceptor --batch at a time, with --topic,
--partition and --principal, under the --on-error policy, and one JSON line
is printed per record. For "produce": the batch's decision (accept, reject
with the message and the record's own error, rewrite with the new record, or
failed with the error). For "fetch": what a consumer with that principal
gets at the record's offset (the record, masked or not; "dropped": true for
a gap; the error that withholds the batch).`,
		Example: `  printf '21\nfoobar\n' | gregor extension test --wasm murmur2.wasm --partitions 64
  seq 1 5 | gregor extension test --wasm region.wasm --partitions 12 --header region=eu
  seq 1 5 | gregor extension test --exec ./my-partitioner --partitions 12
  echo '{"value": {"id": "o-1", "qty": "two"}}' |
    gregor plugin test --wasm jsonschema.wasm --config "$(cat schema.json)" --intercept produce
  echo '{"value": {"ssn": "078-05-1120"}}' |
    gregor plugin test --wasm mask.wasm --config '{"fields": ["ssn"], "allow": ["User:alice"]}' --intercept fetch --principal User:bob`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, _, err := f.settings(); err != nil {
				return err
			}
			if batch < 1 {
				return usagef("--batch must be at least 1")
			}
			if icf.side != "" {
				principal, err := icf.check()
				if err != nil {
					return err
				}
				ctx := cmd.Context()
				ic, closeIc, err := f.openInterceptor(ctx, cmd.ErrOrStderr(), icf.onError)
				if err != nil {
					return err
				}
				defer closeIc()
				return interceptRecords(ctx, ic, icf, principal, cmd.InOrStdin(), cmd.OutOrStdout(), batch)
			}
			if partitions < 1 {
				return usagef("--partitions must be at least 1")
			}
			var hs []partitioner.Header
			for _, h := range headers {
				k, v, ok := strings.Cut(h, "=")
				if !ok || k == "" {
					return usagef("--header %q: want KEY=VALUE", h)
				}
				hs = append(hs, partitioner.Header{Key: k, Value: []byte(v)})
			}
			ctx := cmd.Context()
			p, closeP, err := f.openPartitioner(ctx, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer closeP()
			return placeKeys(ctx, p, cmd.InOrStdin(), cmd.OutOrStdout(), partitions, hs, batch)
		},
	}
	f.register(cmd)
	cmd.Flags().Int32Var(&partitions, "partitions", 0, "the topic's partition count (required)")
	cmd.Flags().StringArrayVar(&headers, "header", nil, "a KEY=VALUE header added to every record (repeatable)")
	cmd.Flags().IntVar(&batch, "batch", 1000, "records per call into the extension")
	cmd.Flags().StringVar(&icf.side, "intercept", "", "test a record interceptor: produce or fetch (records as JSON lines on stdin)")
	cmd.Flags().StringVar(&icf.principal, "principal", auth.Anonymous.String(), "the producer's or consumer's principal, for --intercept")
	cmd.Flags().StringVar(&icf.topic, "topic", "test", "the topic the records are in, for --intercept")
	cmd.Flags().Int32Var(&icf.partition, "partition", 0, "the partition the records are in, for --intercept")
	cmd.Flags().StringVar(&icf.onError, "on-error", config.OnErrorReject, "the interceptor's on_error policy, reject or accept")
	return cmd
}

// placeKeys reads lines, places them in batches and writes key<TAB>partition.
func placeKeys(ctx context.Context, p cliPartitioner, in io.Reader, out io.Writer, n int32, hs []partitioner.Header, batch int) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxKeyLine)
	w := bufio.NewWriter(out)
	recs := make([]partitioner.Record, 0, batch)
	parts := make([]int32, batch)
	flush := func() error {
		if err := p.PartitionBatchContext(ctx, recs, n, parts); err != nil {
			return err
		}
		for i, r := range recs {
			fmt.Fprintf(w, "%s\t%d\n", r.Key, parts[i])
		}
		recs = recs[:0]
		return nil
	}
	for sc.Scan() {
		key := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		recs = append(recs, partitioner.Record{Key: append([]byte{}, key...), Headers: hs})
		if len(recs) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading keys: %w (lines are limited to %d bytes)", err, maxKeyLine)
	}
	if len(recs) > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	return w.Flush()
}

func newExtensionBenchCmd() *cobra.Command {
	var (
		f          extFlags
		partitions int32
		batches    []int
		records    int
		keySize    int
		valueSize  int
	)
	cmd := &cobra.Command{
		Use:   "bench (--wasm FILE | --exec FILE)",
		Short: "Measure a partitioner module's or plugin's cost per record against the built-in",
		Long: `Place --records records with the extension (a WebAssembly module or a
go-plugin binary) and with the built-in murmur2 partitioner, for each batch
size, and report nanoseconds per record. Keys are --key-size bytes, values
--value-size bytes (copied into a module only if it asks for values; always
sent to a plugin).`,
		Example: `  gregor extension bench --wasm murmur2.wasm
  gregor extension bench --wasm region.wasm --batches 1,100,1000 --timeout 100ms
  gregor extension bench --exec ./my-partitioner --records 20000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, _, err := f.settings(); err != nil {
				return err
			}
			if partitions < 1 || records < 1 || keySize < 0 || valueSize < 0 {
				return usagef("--partitions and --records must be positive, sizes not negative")
			}
			for _, b := range batches {
				if b < 1 {
					return usagef("--batches: %d is not a batch size", b)
				}
			}
			ctx := cmd.Context()
			p, closeP, err := f.openPartitioner(ctx, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer closeP()
			recs := make([]partitioner.Record, records)
			value := make([]byte, valueSize)
			for i := range recs {
				key := fmt.Appendf(nil, "%0*d", keySize, i)
				recs[i] = partitioner.Record{Key: key[len(key)-keySize:], Value: value}
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BATCH\tBUILT-IN ns/record\tEXTENSION ns/record\tRATIO")
			for _, b := range batches {
				builtin, err := timePlacement(ctx, &partitioner.Murmur2Batch{}, recs, partitions, b)
				if err != nil {
					return err
				}
				ext, err := timePlacement(ctx, p, recs, partitions, b)
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.2fx\n", b, builtin, ext, ext/builtin)
			}
			return tw.Flush()
		},
	}
	f.register(cmd)
	cmd.Flags().Int32Var(&partitions, "partitions", 64, "the partition count")
	cmd.Flags().IntSliceVar(&batches, "batches", []int{1, 100, 1000}, "batch sizes to measure")
	cmd.Flags().IntVar(&records, "records", 200_000, "records placed per batch size")
	cmd.Flags().IntVar(&keySize, "key-size", 16, "key size in bytes")
	cmd.Flags().IntVar(&valueSize, "value-size", 1024, "value size in bytes")
	return cmd
}

// timePlacement places recs in batches of size batch and returns ns/record.
func timePlacement(ctx context.Context, bp partitioner.BatchPartitioner, recs []partitioner.Record, n int32, batch int) (float64, error) {
	out := make([]int32, batch)
	start := time.Now()
	for off := 0; off < len(recs); off += batch {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		chunk := recs[off:min(off+batch, len(recs))]
		if err := bp.PartitionBatch(chunk, n, out); err != nil {
			return 0, err
		}
	}
	return float64(time.Since(start).Nanoseconds()) / float64(len(recs)), nil
}

func newExtensionInspectCmd() *cobra.Command {
	var f extFlags
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Print a WebAssembly module's ABI version, kinds, exports and imports",
		Long: `Compile and start a module once, then print its ABI version, the extension
kinds it implements, the record fields a partitioner reads, its memory, and
every export and import. A module the broker would refuse is reported with
the reason (and what could still be read from it). A go-plugin binary states
its kinds in its handshake; use "extension test --exec" to try one.`,
		Example: `  gregor extension inspect examples/wasm-murmur2-as/build/murmur2.wasm`,
		Args:    argsOne("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.wasm = args[0]
			o, err := f.options()
			if err != nil {
				return err
			}
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			info, ierr := hooks.Inspect(cmd.Context(), wasm, o)
			printInfo(cmd.OutOrStdout(), args[0], len(wasm), info, ierr == nil)
			return ierr
		},
	}
	cmd.Flags().StringVar(&f.config, "config", "{}", "the configuration passed to gregor_configure, a JSON object")
	cmd.Flags().Uint32Var(&f.memoryPages, "memory-pages", hooks.DefaultMemoryLimitPages, "memory limit in 64 KiB pages")
	return cmd
}

func printInfo(w io.Writer, path string, size int, info hooks.Info, ok bool) {
	fmt.Fprintf(w, "module:        %s (%d bytes)\n", path, size)
	if ok {
		fmt.Fprintf(w, "abi version:   %d\n", info.ABIVersion)
	} else {
		fmt.Fprintf(w, "abi version:   unusable (see the error)\n")
	}
	kinds := make([]string, len(info.Kinds))
	for i, k := range info.Kinds {
		kinds[i] = string(k)
	}
	fmt.Fprintf(w, "kinds:         %s\n", orNone(strings.Join(kinds, ", ")))
	if ok && len(info.Kinds) > 0 && info.Kinds[0] == hooks.KindPartitioner {
		fmt.Fprintf(w, "record fields: %s\n", fieldNames(info.RecordFields))
	}
	max := "none"
	if info.MemoryMax > 0 {
		max = fmt.Sprint(info.MemoryMax)
	}
	fmt.Fprintf(w, "memory pages:  %d initial, maximum %s\n", info.MemoryMin, max)
	fmt.Fprintf(w, "exports:\n")
	for _, e := range info.Exports {
		fmt.Fprintf(w, "  %s\n", e)
	}
	fmt.Fprintf(w, "imports:\n")
	for _, i := range info.Imports {
		fmt.Fprintf(w, "  %s\n", i)
	}
}

func fieldNames(f int32) string {
	var names []string
	for _, x := range []struct {
		bit  int32
		name string
	}{{1, "key"}, {2, "value"}, {4, "headers"}} {
		if f&x.bit != 0 {
			names = append(names, x.name)
		}
	}
	return orNone(strings.Join(names, ", "))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
