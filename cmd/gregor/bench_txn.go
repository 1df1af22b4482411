package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnBenchResult is the throughput of a transactional producer that commits
// every CommitEvery records, beside the idempotent acks=all baseline of the
// same size and partition count.
type txnBenchResult struct {
	Size              int     `json:"record_bytes"`
	Partitions        int32   `json:"partitions"`
	CommitEvery       int     `json:"commit_every"`
	Records           int     `json:"records"`
	RecordsPS         float64 `json:"records_per_sec"`
	MBPS              float64 `json:"mb_per_sec"`
	BaselineRecordsPS float64 `json:"baseline_records_per_sec"`
}

// runTxnBenchCase writes n records in transactions of every records each and
// commits them, measuring records/s from the first send to the last commit.
func runTxnBenchCase(ctx context.Context, target benchTarget, size int, parts int32, every, n int) (txnBenchResult, error) {
	res := txnBenchResult{Size: size, Partitions: parts, CommitEvery: every, Records: n}
	topic := fmt.Sprintf("bench-txn-%d-%d-%d-%d", size, parts, every, time.Now().UnixNano())
	admin, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(target.Addr)}, target.Opts...)...)
	if err != nil {
		return res, err
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	created, err := adm.CreateTopic(ctx, parts, 1, nil, topic)
	if err == nil {
		err = created.Err
	}
	if err != nil {
		return res, fmt.Errorf("create topic: %w", err)
	}
	defer adm.DeleteTopics(context.Background(), topic)

	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(target.Addr), kgo.DefaultProduceTopic(topic),
		kgo.TransactionalID(topic), kgo.ProducerBatchMaxBytes(1 << 20), kgo.MaxBufferedRecords(1 << 16)}, target.Opts...)...)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	value := make([]byte, size)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	var (
		mu       sync.Mutex
		firstErr error
	)
	start := time.Now()
	for sent := 0; sent < n; {
		if err := cl.BeginTransaction(); err != nil {
			return res, fmt.Errorf("begin: %w", err)
		}
		k := min(every, n-sent)
		for i := 0; i < k; i++ {
			cl.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(sent + i)), Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			return res, fmt.Errorf("flush: %w", err)
		}
		mu.Lock()
		perr := firstErr
		mu.Unlock()
		if perr != nil {
			return res, fmt.Errorf("produce: %w", perr)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return res, fmt.Errorf("commit: %w", err)
		}
		sent += k
	}
	elapsed := time.Since(start)
	res.RecordsPS = float64(n) / elapsed.Seconds()
	res.MBPS = float64(n*(size+6)) / elapsed.Seconds() / 1e6
	return res, nil
}

// runTxnBench measures every commit interval for every size at the largest
// partition count, on the plaintext target, next to the acks=all baseline
// found in results.
func runTxnBench(ctx context.Context, target benchTarget, sizes []int, partitions []int32, everies []int, n int, results []benchResult) ([]txnBenchResult, error) {
	everies = slices.DeleteFunc(slices.Clone(everies), func(e int) bool { return e <= 0 })
	if len(everies) == 0 || len(partitions) == 0 {
		return nil, nil
	}
	parts := partitions[0]
	for _, p := range partitions {
		parts = max(parts, p)
	}
	var out []txnBenchResult
	for _, size := range sizes {
		for _, every := range everies {
			r, err := runTxnBenchCase(ctx, target, size, parts, every, n)
			if err != nil {
				return out, fmt.Errorf("bench transactions %d B, %d partitions, commit every %d: %w", size, parts, every, err)
			}
			for _, b := range results {
				if b.Security == target.Security && b.Size == size && b.Partitions == parts && b.Acks == "all" {
					r.BaselineRecordsPS = b.ProduceRecordsPS
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func printTxnBench(w io.Writer, results []txnBenchResult) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transactions\tsize\tpartitions\tcommit every\trecords\trec/s\tMB/s\tacks=all rec/s\tratio\t")
	for _, r := range results {
		ratio := "-"
		if r.BaselineRecordsPS > 0 {
			ratio = fmt.Sprintf("%.2f", r.RecordsPS/r.BaselineRecordsPS)
		}
		fmt.Fprintf(tw, "\t%d\t%d\t%d\t%d\t%.0f\t%.1f\t%.0f\t%s\t\n", r.Size, r.Partitions, r.CommitEvery, r.Records,
			r.RecordsPS, r.MBPS, r.BaselineRecordsPS, ratio)
	}
	tw.Flush()
}
