package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// manyClients is the client count of the many-clients row: that many producers and as many
// consumers at once.
const manyClients = 50

// manyClientsRun is one run: clients producers each send perClient 1 KB records (acks=1) to one
// topic of parts partitions while clients consumers, each assigned its share of the partitions,
// read everything back. It returns the aggregate produce MB/s and the time until the last record
// was consumed, as consume MB/s.
func manyClientsRun(ctx context.Context, bootstrap, topic string, parts int32, clients, perClient int) (float64, float64, error) {
	total := clients * perClient
	shares := partitionShares(parts, clients)
	errs := make(chan error, 1)
	report := func(err error) { // the first error decides; the rest would only repeat it
		select {
		case errs <- err:
		default:
		}
	}
	var consumers []*kgo.Client
	defer func() {
		for _, c := range consumers {
			c.Close()
		}
	}()
	var mu sync.Mutex
	consumed := 0
	allIn := make(chan struct{})
	start := time.Now()
	for _, share := range shares {
		if len(share) == 0 {
			continue
		}
		offs := map[int32]kgo.Offset{}
		for _, p := range share {
			offs[p] = kgo.NewOffset().AtStart()
		}
		c, err := client(bootstrap, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offs}), kgo.FetchMaxWait(100*time.Millisecond))
		if err != nil {
			return 0, 0, err
		}
		consumers = append(consumers, c)
		go func(c *kgo.Client) {
			for {
				fs := c.PollFetches(ctx)
				if ctx.Err() != nil {
					return
				}
				var ferr error
				fs.EachError(func(_ string, _ int32, err error) { ferr = err })
				if ferr != nil && !errors.Is(ferr, context.Canceled) {
					report(ferr)
					return
				}
				mu.Lock()
				consumed += fs.NumRecords()
				if consumed >= total {
					select {
					case <-allIn:
					default:
						close(allIn)
					}
				}
				done := consumed >= total
				mu.Unlock()
				if done {
					return
				}
			}
		}(c)
	}
	recs := randomKeyed.records(1024, 1024)
	var prod sync.WaitGroup
	for i := 0; i < clients; i++ {
		prod.Add(1)
		go func(i int) {
			defer prod.Done()
			p, err := client(bootstrap, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(5*time.Millisecond))
			if err != nil {
				report(err)
				return
			}
			defer p.Close()
			for j := 0; j < perClient; j++ {
				r := recs[(i*perClient+j)%len(recs)]
				r.Topic = topic
				p.Produce(ctx, &r, func(_ *kgo.Record, err error) {
					if err != nil {
						report(err)
					}
				})
			}
			if err := p.Flush(ctx); err != nil {
				report(err)
			}
		}(i)
	}
	prod.Wait()
	produced := time.Since(start).Seconds()
	select {
	case err := <-errs:
		return 0, 0, err
	default:
	}
	select {
	case <-allIn:
	case err := <-errs:
		return 0, 0, err
	case <-ctx.Done():
		mu.Lock()
		n := consumed
		mu.Unlock()
		return 0, 0, fmt.Errorf("consumed %d of %d: %w", n, total, ctx.Err())
	}
	all := time.Since(start).Seconds()
	mb := float64(total) * 1024 / (1 << 20)
	return mb / produced, mb / all, nil
}

// partitionShares deals partitions 0..parts-1 round-robin to n consumers; with fewer partitions
// than consumers some get none.
func partitionShares(parts int32, n int) [][]int32 {
	s := make([][]int32, n)
	for p := int32(0); p < parts; p++ {
		s[int(p)%n] = append(s[int(p)%n], p)
	}
	return s
}

// measureManyClients records the 50 producers + 50 consumers row on a 100-partition topic.
func measureManyClients(ctx context.Context, t target, o options, record recordFn) error {
	const parts = 100
	topic := "bench-clients"
	if err := createTopic(ctx, t.bootstrap, topic, parts); err != nil {
		return err
	}
	per := max(100, int(4000*o.scale))
	p, c, err := manyClientsRun(ctx, t.bootstrap, topic, parts, manyClients, per)
	if err != nil {
		return fmt.Errorf("many clients: %w", err)
	}
	fmt.Fprintf(os.Stderr, "compare: %s %d producers + %d consumers: produce %.1f MB/s, end to end %.1f MB/s\n", t.name, manyClients, manyClients, p, c)
	what := fmt.Sprintf("%d producers + %d consumers, 1 KB, %d partitions, acks=1", manyClients, manyClients, parts)
	record(t.name, "franz-go "+what+", produce", "MB/s", "higher", p)
	record(t.name, "franz-go "+what+", all consumed", "MB/s", "higher", c)
	return nil
}
