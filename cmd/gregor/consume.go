package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type consumeOpts struct {
	from      string
	partition int32
	count     int
	timeout   time.Duration
	format    string
	quiet     bool
	// shareGroup reads as a member of this share group (KIP-932).
	shareGroup string
}

func newConsumeCmd() *cobra.Command {
	cf := &clusterFlags{}
	o := &consumeOpts{}
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Read records from a topic and print them",
		Long: `Read records from TOPIC (every partition, or one with --partition) and print
them to standard output, one per line by default. Without --count or --timeout
it keeps waiting for new records until interrupted; the number of records read
is printed to standard error at the end.

Where to start (--from):
  beginning          the log start of each partition (the default)
  end                only records written from now on
  <offset>           this offset in each partition, e.g. 1200
  -<n>               the last n records of each partition, e.g. -10
  -<duration>        records from the last duration, e.g. -15m or -2h
  <RFC 3339 time>    the first record at or after a time, e.g. 2024-05-01T12:00:00Z
  @<unix-millis>     the same with Unix milliseconds, e.g. @1714564800000
An offset outside the log starts at the nearest end of it.

With --share-group the records are read as a member of a share group: each
record goes to one of the group's members, and those printed are accepted
(acknowledged) so that no member reads them again. Where a share group starts
is its config share.auto.offset.reset (latest unless set to earliest), so
--from and --partition do not apply.

` + formatHelp,
		Example: `  gregor consume orders
  gregor consume orders --from end
  gregor consume orders --partition 2 --from 1200 --count 10
  gregor consume orders --from 2024-05-01T12:00:00Z --timeout 5s
  gregor consume orders --format '%p/%o %k=%v headers=[%h]'
  gregor consume orders --format '{{.Timestamp.Format "15:04:05"}} {{.Key}} {{.Header "trace-id"}}'
  gregor consume orders --format json --count 100 > orders.jsonl
  gregor consume orders --share-group pickers --count 10`,
		Args:              argsOne("TOPIC"),
		ValidArgsFunction: completeOne(completeTopics(cf)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("partition") && o.partition < 0 {
				return usagef("--partition must be 0 or more, got %d", o.partition)
			}
			if o.count < 0 {
				return usagef("--count must be 0 or more, got %d", o.count)
			}
			if o.timeout < 0 {
				return usagef("--timeout must not be negative, got %v", o.timeout)
			}
			if o.shareGroup != "" && (cmd.Flags().Changed("from") || cmd.Flags().Changed("partition")) {
				return usagef("--share-group reads where the share group is (its share.auto.offset.reset config): --from and --partition do not apply")
			}
			return runConsume(cmd, cf, o, args[0])
		},
	}
	cf.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&o.from, "from", "f", "beginning", "where to start: beginning, end, <offset>, -<n>, -<duration>, <RFC 3339 time> or @<unix-millis>")
	f.Int32VarP(&o.partition, "partition", "p", -1, "read only this partition (-1: all)")
	f.IntVarP(&o.count, "count", "n", 0, "exit after this many records (0: no limit)")
	f.DurationVarP(&o.timeout, "timeout", "t", 0, "exit when no record arrives for this long (0: wait forever)")
	f.StringVarP(&o.format, "format", "o", "%v", "output format: a %-format, a Go template or json (see above)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "do not print the record count to standard error")
	f.StringVar(&o.shareGroup, "share-group", "", "read as a member of this share group, accepting each record printed")
	return cmd
}

// parseFrom turns a --from value into a start offset; now resolves relative
// durations.
func parseFrom(s string, now time.Time) (kgo.Offset, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (kgo.Offset, error) {
		return kgo.Offset{}, usagef("--from %q: %s (want beginning, end, <offset>, -<n>, -<duration>, <RFC 3339 time> or @<unix-millis>)", s, why)
	}
	switch strings.ToLower(s) {
	case "beginning", "earliest", "start", "oldest":
		return kgo.NewOffset().AtStart(), nil
	case "end", "latest", "newest":
		return kgo.NewOffset().AtEnd(), nil
	case "":
		return bad("empty")
	}
	if ms, ok := strings.CutPrefix(s, "@"); ok {
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || n < 0 {
			return bad("not a non-negative number of Unix milliseconds")
		}
		return kgo.NewOffset().AfterMilli(n), nil
	}
	if back, ok := strings.CutPrefix(s, "-"); ok {
		if n, err := strconv.ParseInt(back, 10, 64); err == nil {
			if n < 0 {
				return bad("a negative count")
			}
			return kgo.NewOffset().AtEnd().Relative(-n), nil
		}
		d, err := time.ParseDuration(back)
		if err != nil || d < 0 {
			return bad("not a record count or a duration")
		}
		return kgo.NewOffset().AfterMilli(now.Add(-d).UnixMilli()), nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return kgo.NewOffset().At(n), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if t.UnixMilli() < 0 {
			return bad("a time before 1970")
		}
		return kgo.NewOffset().AfterMilli(t.UnixMilli()), nil
	}
	return bad("not understood")
}

func runConsume(cmd *cobra.Command, cf *clusterFlags, o *consumeOpts, topic string) error {
	formatter, err := newRecordFormatter(o.format)
	if err != nil {
		return err
	}
	start, err := parseFrom(o.from, time.Now())
	if err != nil {
		return err
	}
	var opts []kgo.Opt
	if o.shareGroup != "" {
		opts = append(opts, kgo.ShareGroup(o.shareGroup), kgo.ConsumeTopics(topic))
	} else if o.partition >= 0 {
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {o.partition: start}}))
	} else {
		opts = append(opts, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(start))
	}
	ctx := cmd.Context()
	cl, err := cf.connect(ctx, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if o.shareGroup != "" {
		// The acknowledgements of what was printed reach the broker
		// before the client leaves the group.
		defer func() {
			fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := cl.FlushAcks(fctx); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "gregor: warning: acknowledging the records read: %v\n", err)
			}
		}()
	}
	if err := checkConsumeTopic(ctx, kadm.NewClient(cl), topic, o.partition); err != nil {
		return err
	}

	out := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
	var (
		buf      []byte
		consumed int
		printed  []*kgo.Record
	)
	defer func() {
		if !o.quiet {
			fmt.Fprintf(cmd.ErrOrStderr(), "consumed %s from topic %q\n", plural(int64(consumed), "record"), topic)
		}
	}()
	// Records going to a file or pipe leave the terminal free for a live
	// count on stderr.
	var progressed counter
	if !o.quiet && !isTerminal(cmd.OutOrStdout()) {
		stop := startProgress(cmd.ErrOrStderr(), "consume "+topic, "records", int64(o.count), &progressed)
		defer stop()
	}
	for o.count == 0 || consumed < o.count {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if o.timeout > 0 {
			pollCtx, cancel = context.WithTimeout(ctx, o.timeout)
		}
		max := -1
		if o.count > 0 {
			max = o.count - consumed
		}
		fetches := cl.PollRecords(pollCtx, max)
		idle := pollCtx.Err() != nil
		cancel()
		if err := fetchError(topic, fetches, cmd); err != nil {
			out.Flush()
			return err
		}
		var writeErr error
		printed = printed[:0]
		fetches.EachRecord(func(r *kgo.Record) {
			if writeErr != nil {
				return
			}
			buf, writeErr = formatter.appendRecord(buf[:0], r)
			if writeErr == nil {
				_, writeErr = out.Write(buf)
			}
			if writeErr == nil && o.shareGroup != "" {
				printed = append(printed, r)
			}
			consumed++
		})
		progressed.add(int64(fetches.NumRecords()))
		if writeErr == nil {
			writeErr = out.Flush()
		}
		if writeErr != nil {
			return fmt.Errorf("consume: %w", writeErr)
		}
		// A share group's records are accepted once printed; the others
		// go back to the group when the client leaves.
		if len(printed) > 0 {
			cl.MarkAcks(kgo.AckAccept, printed...)
		}
		if ctx.Err() != nil {
			return nil // interrupted: a normal way to stop
		}
		if idle && fetches.NumRecords() == 0 {
			return nil // --timeout passed without a record
		}
	}
	return nil
}

// fetchError returns the first fatal error in fetches; data-loss notices
// are printed as warnings, and context errors mean "stop" and are left to
// the caller.
func fetchError(topic string, fetches kgo.Fetches, cmd *cobra.Command) error {
	var fatal error
	fetches.EachError(func(t string, p int32, err error) {
		var lost *kgo.ErrDataLoss
		switch {
		case fatal != nil:
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		case errors.As(err, &lost):
			fmt.Fprintf(cmd.ErrOrStderr(), "gregor: warning: %v\n", err)
		case errors.Is(err, kgo.ErrClientClosed):
			fatal = fmt.Errorf("consume: client closed")
		case isUnknownTopic(err):
			fatal = topicError(topic, err, "")
		case p >= 0:
			fatal = fmt.Errorf("consume: topic %q partition %d: %w", t, p, err)
		default:
			fatal = fmt.Errorf("consume: %w", err)
		}
	})
	return fatal
}

// checkConsumeTopic reports a missing topic or partition before waiting on it.
func checkConsumeTopic(ctx context.Context, adm *kadm.Client, topic string, partition int32) error {
	tds, err := adm.ListTopicsWithInternal(ctx, topic)
	if err != nil {
		return fmt.Errorf("metadata for topic %q: %w", topic, err)
	}
	td := tds[topic]
	if td.Err != nil {
		return topicError(topic, td.Err, "")
	}
	if n := int32(len(td.Partitions)); partition >= n {
		return fmt.Errorf("partition %d does not exist: topic %q has %d partitions (0 to %d)", partition, topic, n, n-1)
	}
	return nil
}
