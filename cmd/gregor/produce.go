package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type produceOpts struct {
	keySeparator string
	partition    int32
	compression  string
	acks         string
	headers      []string
	timeout      time.Duration
	maxLineBytes int

	partitionerWASM    string
	partitionerConfig  string
	partitionerTimeout time.Duration
}

func newProduceCmd() *cobra.Command {
	cf := &clusterFlags{}
	o := &produceOpts{}
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Write records to a topic, one per line of standard input",
		Long: `Read standard input line by line and write each line as one record to TOPIC.
A trailing "\r\n" or "\n" is not part of the record; an empty line is a record
with an empty value.

With --key-separator, each line is split at the first occurrence of the
separator into key and value; a line without the separator is an error. Keyed
records go to the partition Kafka's default partitioner picks (murmur2 of the
key), so they land where a Java producer would put them; records without a key
are spread in sticky batches. --partition overrides both.

With --partitioner-wasm, records are placed by that WebAssembly partitioner
module instead (the module a topic names in its gregor.partitioner config;
see hooks/ABI.md), so they land where the broker's produce-over-HTTP puts them
and pass a topic's placement check (gregor.partitioner.enforce=true). The
module sees each record's key, value and headers; --partitioner-config is its
configuration, as the [extensions.NAME] config table in broker.toml would be.
If the module fails for a record, the record is placed by Kafka's default
rule and the command exits non-zero naming the failure.

When standard input ends, every record is flushed and a summary (records,
bytes, first and last offset per partition) is printed to standard error. The
exit status is non-zero if any record failed.

If the topic does not exist, it is created only if the broker creates topics
automatically (topics.auto_create in broker.toml).`,
		Example: `  echo 'hello' | gregor produce greetings
  printf 'user-1:{"clicks":3}\nuser-2:{"clicks":5}\n' | gregor produce clicks --key-separator :
  gregor produce logs --compression zstd --acks 1 --header source=nginx < access.log
  seq 1000 | gregor produce numbers --partition 0
  gregor produce orders -K : -H region=eu --partitioner-wasm region.wasm < orders.txt`,
		Args:              argsOne("TOPIC"),
		ValidArgsFunction: completeOne(completeTopics(cf)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("partition") && o.partition < 0 {
				return usagef("--partition must be 0 or more, got %d", o.partition)
			}
			if o.partition >= 0 && o.partitionerWASM != "" {
				return usagef("--partition and --partitioner-wasm exclude each other")
			}
			return runProduce(cmd, cf, o, args[0])
		},
	}
	cf.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&o.keySeparator, "key-separator", "K", "", "split each line into key and value at the first occurrence of this string")
	f.Int32VarP(&o.partition, "partition", "p", -1, "write every record to this partition (-1: Kafka's partitioner chooses)")
	f.StringVarP(&o.compression, "compression", "z", "none", "batch compression: none, gzip, snappy, lz4 or zstd")
	f.StringVar(&o.acks, "acks", "all", "acknowledgements to wait for: 0, 1, or all (-1)")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "add header key=value to every record; repeat for several")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "fail a record not acknowledged within this time (Kafka's delivery.timeout.ms)")
	f.IntVar(&o.maxLineBytes, "max-line-bytes", 1<<20, "longest input line accepted")
	f.StringVar(&o.partitionerWASM, "partitioner-wasm", "", "place records with the WebAssembly partitioner module in `FILE` (a topic's gregor.partitioner)")
	f.StringVar(&o.partitionerConfig, "partitioner-config", "{}", "configuration of the --partitioner-wasm module, a `JSON` object")
	f.DurationVar(&o.partitionerTimeout, "partitioner-timeout", 0, "time limit per --partitioner-wasm call (0: none)")
	return cmd
}

// producerOptions turns the flags into client options.
func (o *produceOpts) producerOptions() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	codec, err := parseCompression(o.compression)
	if err != nil {
		return nil, err
	}
	opts = append(opts, kgo.ProducerBatchCompression(codec))
	switch o.acks {
	case "all", "-1":
		// Idempotent writes (kgo's default) need acks=all.
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	default:
		return nil, usagef("--acks %q: want 0, 1, all or -1", o.acks)
	}
	if o.partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	} else {
		// Kafka's default since 3.3: murmur2 for keys, sticky batches of
		// up to 64 KiB for records without a key, adaptive to slow brokers.
		opts = append(opts, kgo.RecordPartitioner(kgo.UniformBytesPartitioner(64<<10, true, true, nil)))
	}
	if o.timeout <= 0 {
		return nil, usagef("--timeout must be positive, got %v", o.timeout)
	}
	if o.maxLineBytes < 1 {
		return nil, usagef("--max-line-bytes must be positive, got %d", o.maxLineBytes)
	}
	opts = append(opts, kgo.RecordDeliveryTimeout(o.timeout), kgo.AllowAutoTopicCreation())
	return opts, nil
}

func parseCompression(s string) (kgo.CompressionCodec, error) {
	switch strings.ToLower(s) {
	case "none", "":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, usagef("--compression %q: want none, gzip, snappy, lz4 or zstd", s)
}

func runProduce(cmd *cobra.Command, cf *clusterFlags, o *produceOpts, topic string) error {
	opts, err := o.producerOptions()
	if err != nil {
		return err
	}
	var wp *wasmPartitioner
	if o.partitionerWASM != "" {
		if wp, err = loadWASMPartitioner(cmd.Context(), o.partitionerWASM, o.partitionerConfig, o.partitionerTimeout); err != nil {
			return err
		}
		defer wp.close() // after the client is closed
		opts = append(opts, wp.option())
	}
	hdrs, err := parseKeyValues("header", o.headers, false)
	if err != nil {
		return err
	}
	headers := make([]kgo.RecordHeader, len(hdrs))
	for i, h := range hdrs {
		headers[i] = kgo.RecordHeader{Key: h.key, Value: []byte(h.value)}
	}

	ctx := cmd.Context()
	cl, err := cf.connect(ctx, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := checkProduceTopic(ctx, cl, topic, o.partition); err != nil {
		return err
	}

	stats := newProduceStats(o.acks == "0")
	lines := readLines(cmd.InOrStdin(), o.maxLineBytes)
	sep := []byte(o.keySeparator)
	var inputErr error
	lineNo := 0
read:
	for {
		var ln lineOrErr
		var ok bool
		select {
		case <-ctx.Done():
			inputErr = fmt.Errorf("interrupted after %d lines", lineNo)
			break read
		case ln, ok = <-lines:
		}
		if !ok {
			break
		}
		if ln.err != nil {
			inputErr = ln.err
			break
		}
		lineNo++
		r := &kgo.Record{Topic: topic, Value: ln.line, Headers: headers}
		if len(sep) > 0 {
			i := bytes.Index(ln.line, sep)
			if i < 0 {
				inputErr = fmt.Errorf("line %d has no key separator %q", lineNo, o.keySeparator)
				break
			}
			r.Key, r.Value = ln.line[:i], ln.line[i+len(sep):]
		}
		if o.partition >= 0 {
			r.Partition = o.partition
		}
		cl.Produce(ctx, r, stats.record)
	}

	// Deliver what was read even after an interrupt or a bad line.
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.timeout+5*time.Second)
	defer cancel()
	flushErr := cl.Flush(flushCtx)

	stats.print(cmd.ErrOrStderr(), topic)
	switch {
	case inputErr != nil:
		return fmt.Errorf("produce: %w", inputErr)
	case stats.failed > 0:
		return fmt.Errorf("produce: %d of %d records failed; first error: %w",
			stats.failed, stats.failed+stats.records, explainProduceError(topic, stats.firstErr))
	case flushErr != nil:
		return fmt.Errorf("produce: flush: %w", flushErr)
	}
	if wp != nil {
		if err := wp.err(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
	}
	return nil
}

// checkProduceTopic fails early, with a clear message, when the topic does
// not exist and will not be created, or when --partition is out of range.
func checkProduceTopic(ctx context.Context, cl *kgo.Client, topic string, partition int32) error {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = true
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("metadata for topic %q: %w", topic, err)
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("metadata for topic %q: the broker answered with %d topics", topic, len(resp.Topics))
	}
	mt := resp.Topics[0]
	switch err := kerr.ErrorForCode(mt.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.LeaderNotAvailable):
		return nil // being created automatically; partitions not known yet
	case isUnknownTopic(err):
		return explain(err, "topic %q does not exist and the broker does not create topics automatically "+
			"(create it with: gregor topic create %s)", topic, topic)
	default:
		return topicError(topic, err, "")
	}
	if n := int32(len(mt.Partitions)); partition >= n {
		return fmt.Errorf("partition %d does not exist: topic %q has %d partitions (0 to %d)", partition, topic, n, n-1)
	}
	return nil
}

func explainProduceError(topic string, err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return topicError(topic, err, "")
	}
	return err
}

// lineOrErr is one input line, or the error that ended the input.
type lineOrErr struct {
	line []byte
	err  error
}

// readLines reads r in its own goroutine so an interrupt is noticed while
// waiting for input. Each line is a fresh slice without its line ending.
func readLines(r io.Reader, maxLine int) <-chan lineOrErr {
	ch := make(chan lineOrErr, 256)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, min(64<<10, maxLine+2)), maxLine+2) // +2: room for "\r\n"
		n := 0
		for sc.Scan() {
			n++
			b := sc.Bytes()
			if len(b) > maxLine {
				ch <- lineOrErr{err: fmt.Errorf("line %d is longer than --max-line-bytes (%d)", n, maxLine)}
				return
			}
			ch <- lineOrErr{line: append(make([]byte, 0, len(b)), b...)}
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = fmt.Errorf("line %d is longer than --max-line-bytes (%d)", n+1, maxLine)
			} else {
				err = fmt.Errorf("read standard input: %w", err)
			}
			ch <- lineOrErr{err: err}
		}
	}()
	return ch
}

// produceStats collects delivery results from the client's callbacks.
type produceStats struct {
	noAcks bool

	mu       sync.Mutex // guards the fields below
	records  int64
	bytes    int64
	failed   int64
	firstErr error
	parts    map[int32]*offsetSpan
}

type offsetSpan struct {
	first, last, count int64
}

func newProduceStats(noAcks bool) *produceStats {
	return &produceStats{noAcks: noAcks, parts: make(map[int32]*offsetSpan)}
}

func (s *produceStats) record(r *kgo.Record, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed++
		if s.firstErr == nil {
			s.firstErr = err
		}
		return
	}
	s.records++
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	s.bytes += int64(n)
	sp := s.parts[r.Partition]
	if sp == nil {
		s.parts[r.Partition] = &offsetSpan{first: r.Offset, last: r.Offset, count: 1}
		return
	}
	sp.first = min(sp.first, r.Offset)
	sp.last = max(sp.last, r.Offset)
	sp.count++
}

func plural(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (s *produceStats) print(w io.Writer, topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(w, "produced %s (%s) to topic %q\n", plural(s.records, "record"), plural(s.bytes, "byte"), topic)
	ps := make([]int32, 0, len(s.parts))
	for p := range s.parts {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	for _, p := range ps {
		sp := s.parts[p]
		switch {
		case s.noAcks:
			fmt.Fprintf(w, "  partition %d: %s (offsets unknown with --acks 0)\n", p, plural(sp.count, "record"))
		case sp.first == sp.last:
			fmt.Fprintf(w, "  partition %d: offset %d (%s)\n", p, sp.first, plural(sp.count, "record"))
		default:
			fmt.Fprintf(w, "  partition %d: offsets %d to %d (%s)\n", p, sp.first, sp.last, plural(sp.count, "record"))
		}
	}
	if s.failed > 0 {
		fmt.Fprintf(w, "failed: %s\n", plural(s.failed, "record"))
	}
}
