package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// maxKeyLine bounds one line of `plugin test` input.
const maxKeyLine = 1 << 20

// pluginFlags are shared by the plugin subcommands that load a module.
type pluginFlags struct {
	wasm        string
	config      string
	timeout     time.Duration
	memoryPages uint32
}

func (f *pluginFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.wasm, "wasm", "", "the WebAssembly module (required)")
	cmd.Flags().StringVar(&f.config, "config", "{}", "the module's configuration, a JSON object")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 0, "time limit per call (0: none, as for a trusted module)")
	cmd.Flags().Uint32Var(&f.memoryPages, "memory-pages", hooks.DefaultMemoryLimitPages, "memory limit in 64 KiB pages")
}

func (f *pluginFlags) options() (hooks.Options, error) {
	if f.wasm == "" {
		return hooks.Options{}, usagef("--wasm is required")
	}
	cfg := []byte(strings.TrimSpace(f.config))
	if !bytes.HasPrefix(cfg, []byte("{")) {
		return hooks.Options{}, usagef("--config must be a JSON object, got %q", f.config)
	}
	o := hooks.Options{Config: cfg, CallTimeout: f.timeout, MemoryLimitPages: f.memoryPages, MaxInstances: 1, Stderr: os.Stderr}
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

func newPluginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Test, benchmark and inspect extension modules",
		Long: `Work with Gregor's WebAssembly extensions (see hooks/ABI.md) without a broker:
place keys with a partitioner module, measure its cost per record against the
built-in murmur2 partitioner, or list what a module exports.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPluginTestCmd(), newPluginBenchCmd(), newPluginInspectCmd())
	return cmd
}

func newPluginTestCmd() *cobra.Command {
	var (
		f          pluginFlags
		partitions int32
		headers    []string
		batch      int
	)
	cmd := &cobra.Command{
		Use:   "test --wasm FILE --partitions N",
		Short: "Place keys read from stdin with a partitioner module",
		Long: `Read keys from stdin, one per line, place them with the partitioner module and
print "key<TAB>partition" for each, in order. The module runs in the same host
the broker uses, with the same limits and checks. --header adds a header to
every record (for partitioners that route by header).`,
		Example: `  printf '21\nfoobar\n' | gregor plugin test --wasm murmur2.wasm --partitions 64
  seq 1 5 | gregor plugin test --wasm region.wasm --partitions 12 --header region=eu`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options()
			if err != nil {
				return err
			}
			if partitions < 1 {
				return usagef("--partitions must be at least 1")
			}
			if batch < 1 {
				return usagef("--batch must be at least 1")
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
			p, err := hooks.LoadPartitioner(ctx, f.wasm, o)
			if err != nil {
				return err
			}
			defer p.Close(context.WithoutCancel(ctx))
			return placeKeys(ctx, p, cmd.InOrStdin(), cmd.OutOrStdout(), partitions, hs, batch)
		},
	}
	f.register(cmd)
	cmd.Flags().Int32Var(&partitions, "partitions", 0, "the topic's partition count (required)")
	cmd.Flags().StringArrayVar(&headers, "header", nil, "a KEY=VALUE header added to every record (repeatable)")
	cmd.Flags().IntVar(&batch, "batch", 1000, "records per call into the module")
	return cmd
}

// placeKeys reads lines, places them in batches and writes key<TAB>partition.
func placeKeys(ctx context.Context, p *hooks.Partitioner, in io.Reader, out io.Writer, n int32, hs []partitioner.Header, batch int) error {
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

func newPluginBenchCmd() *cobra.Command {
	var (
		f          pluginFlags
		partitions int32
		batches    []int
		records    int
		keySize    int
		valueSize  int
	)
	cmd := &cobra.Command{
		Use:   "bench --wasm FILE",
		Short: "Measure a partitioner module's cost per record against the built-in",
		Long: `Place --records records with the module and with the built-in murmur2
partitioner, for each batch size, and report nanoseconds per record. Keys are
--key-size bytes, values --value-size bytes (copied into the module only if
it asks for values).`,
		Example: `  gregor plugin bench --wasm murmur2.wasm
  gregor plugin bench --wasm region.wasm --batches 1,100,1000 --timeout 100ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options()
			if err != nil {
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
			p, err := hooks.LoadPartitioner(ctx, f.wasm, o)
			if err != nil {
				return err
			}
			defer p.Close(context.WithoutCancel(ctx))
			recs := make([]partitioner.Record, records)
			value := make([]byte, valueSize)
			for i := range recs {
				key := fmt.Appendf(nil, "%0*d", keySize, i)
				recs[i] = partitioner.Record{Key: key[len(key)-keySize:], Value: value}
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BATCH\tBUILT-IN ns/record\tMODULE ns/record\tRATIO")
			for _, b := range batches {
				builtin, err := timePlacement(ctx, &partitioner.Murmur2Batch{}, recs, partitions, b)
				if err != nil {
					return err
				}
				module, err := timePlacement(ctx, p, recs, partitions, b)
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.2fx\n", b, builtin, module, module/builtin)
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

func newPluginInspectCmd() *cobra.Command {
	var f pluginFlags
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Print a module's ABI version, kinds, exports and imports",
		Long: `Compile and start a module once, then print its ABI version, the extension
kinds it implements, the record fields a partitioner reads, its memory, and
every export and import. A module the broker would refuse is reported with
the reason (and what could still be read from it).`,
		Example: `  gregor plugin inspect examples/wasm-murmur2-as/build/murmur2.wasm`,
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
