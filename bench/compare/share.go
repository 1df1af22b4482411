package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The share-group row: one Java share consumer (Kafka's ShareConsumerPerformance, one
// thread) reads 1 KB records from a 6-partition topic through a share group, every record
// acquired and acknowledged (implicit acknowledgement). The group starts at the earliest
// offset (share.auto.offset.reset=earliest), which a share group must be told.

const shareMetric = "ShareConsumerPerformance 1 KB, 6 partitions (one share consumer)"

func measureShare(ctx context.Context, t target, n int, record recordFn, notes map[string]string) error {
	if !advertises(t.bootstrap, 76) { // ShareGroupHeartbeat
		notes[shareMetric] = t.name + ": not run, share groups not advertised"
		record(t.name, shareMetric, "MB/s", "higher", 0)
		return nil
	}
	topic, group := "bench-share", "bench-share"
	if err := createTopic(ctx, t.bootstrap, topic, 6); err != nil {
		return err
	}
	if _, _, err := produceThroughput(ctx, t.bootstrap, topic, n, 1024, kgo.LeaderAck(), true, randomKeyed); err != nil {
		return fmt.Errorf("share: produce: %w", err)
	}
	if err := shareEarliest(ctx, t.bootstrap, group); err != nil {
		return err
	}
	out, err := exec.Command("scripts/kafka-ref.sh", "share-consumer-perf", "--bootstrap-server", t.bootstrap,
		"--topic", topic, "--group", group, "--num-records", fmt.Sprint(n), "--timeout", "30000").CombinedOutput()
	if err != nil {
		return fmt.Errorf("share-consumer-perf: %w: %s", err, lastLine(string(out)))
	}
	mbps, err := parseShareConsumerPerf(string(out))
	if err != nil {
		return err
	}
	record(t.name, shareMetric, "MB/s", "higher", mbps)
	return nil
}

// shareEarliest sets the group config share.auto.offset.reset=earliest.
func shareEarliest(ctx context.Context, bootstrap, group string) error {
	cl, err := client(bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value, c.Op = "share.auto.offset.reset", kmsg.StringPtr("earliest"), kmsg.IncrementalAlterConfigOpSet
	rr.Configs = append(rr.Configs, c)
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.Resources[0].ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("share: share.auto.offset.reset=earliest on %s: %w", group, err)
	}
	return nil
}

// parseShareConsumerPerf reads MB.sec from the summary line under the header the tool prints.
func parseShareConsumerPerf(out string) (float64, error) {
	col := -1
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if col < 0 {
			for i, h := range f {
				if h == "MB.sec" {
					col = i
				}
			}
			continue
		}
		if len(f) > col {
			if v, err := strconv.ParseFloat(f[col], 64); err == nil {
				return v, nil
			}
		}
	}
	return 0, fmt.Errorf("share-consumer-perf: no MB.sec in %q", lastLine(out))
}

// advertises reports whether the target's ApiVersions lists key.
func advertises(bootstrap string, key int16) bool {
	cl, err := client(bootstrap)
	if err != nil {
		return false
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		return false
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == key {
			return true
		}
	}
	return false
}
