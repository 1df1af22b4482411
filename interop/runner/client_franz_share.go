package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const shareRecords = 60

// franzShare is the share_group scenario: two franz-go share consumers of one share group, one
// accepting every record explicitly (Record.Ack) and one leaving it to the client (what a poll
// returned is accepted by the next poll), read a 3-partition topic together; every record
// arrives once.
func franzShare(ctx context.Context, env Env) error {
	topic, group := env.Prefix+"-share", env.Prefix+"-share"
	if err := franzCreate(ctx, env, topic, 3, nil); err != nil {
		return err
	}
	acl, err := franzClient(env)
	if err != nil {
		return err
	}
	defer acl.Close()
	// Share groups start at the latest offset unless the group config says earliest.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value, c.Op = "share.auto.offset.reset", kmsg.StringPtr("earliest"), kmsg.IncrementalAlterConfigOpSet
	rr.Configs = append(rr.Configs, c)
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, acl)
	if err == nil {
		err = kerr.ErrorForCode(resp.Resources[0].ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("share.auto.offset.reset=earliest on group %s: %w", group, err)
	}
	pcl, err := franzClient(env, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer pcl.Close()
	var recs []*kgo.Record
	for i := 0; i < shareRecords; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 3), Value: []byte(fmt.Sprintf("s-%d", i))})
	}
	if err := pcl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}

	var mu sync.Mutex
	seen := map[string]int{}
	got := [2]int{}
	var wg sync.WaitGroup
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	for i, explicit := range []bool{false, true} {
		cl, err := franzClient(env, kgo.ShareGroup(group), kgo.ConsumeTopics(topic))
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for mctx.Err() == nil {
				fs := cl.PollFetches(mctx)
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)]++
					got[i]++
					mu.Unlock()
					if explicit {
						r.Ack(kgo.AckAccept)
					}
				})
			}
		}()
	}
	deadline := deadlineOf(ctx)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n >= shareRecords {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			stop()
			wg.Wait()
			return fmt.Errorf("share group read %d of %d records (implicit member %d, explicit %d)", n, shareRecords, got[0], got[1])
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	stop()
	wg.Wait()
	for i := 0; i < shareRecords; i++ {
		if n := seen[fmt.Sprintf("s-%d", i)]; n != 1 {
			return fmt.Errorf("record s-%d delivered %d times, want once (implicit member read %d, explicit %d)", i, n, got[0], got[1])
		}
	}
	if len(seen) != shareRecords {
		return fmt.Errorf("read %d distinct values, want %d", len(seen), shareRecords)
	}
	return nil
}

func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(90 * time.Second)
}
