package tests

import (
	"bufio"
	"context"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/mirror"
)

// TestMirrorLinkManyPartitionsBounded links 200 partitions holding data
// with a small buffer_memory: the mirror's buffered bytes never pass the
// budget, the target sees a bounded number of connections (not one per
// partition), and the target holds the same records at the same offsets.
func TestMirrorLinkManyPartitionsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	east := startBroker(t, fastLog)
	west := startBroker(t, fastLog, func(c *config.Config) { c.Listeners.HTTP = "127.0.0.1:0" })
	const parts = 200
	createTopic(t, east.Addr, "orders.many", parts, nil)
	// 30 records of 1 KB a partition: each partition's backlog is below
	// a fetch's smallest share (64 KiB), so no batch may pass the budget.
	produceKilobytes(t, east.Addr, "orders.many", parts, 30)
	ends := endOffsets(t, east.Addr, "orders.many")
	before := metric(t, west.HTTPAddr, "gregor_connections")

	_, cfg := mirrorConfig(t, east.Addr, west.Addr, mirror.ModeLink, "")
	cfg.Mirror.BufferMemory = 1 << 20
	cfg.Mirror.TargetConnectionsPerBroker = 2
	reg := prometheus.NewRegistry()
	startMirror(t, cfg, func(o *mirror.RunOptions) { o.Registerer = reg })

	// Sample the mirror's buffered bytes and the target's open
	// connections until the target holds everything.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var peakBuffered, peakConns float64
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if v, ok := gaugeValue(reg, "gregor_mirror_buffered_bytes"); ok {
				peakBuffered = max(peakBuffered, v)
			}
			time.Sleep(2 * time.Millisecond) // a sampling period, not synchronisation
		}
	}()
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if v, ok := tryMetric(west.HTTPAddr, "gregor_connections"); ok {
				peakConns = max(peakConns, v)
			}
			time.Sleep(20 * time.Millisecond) // a sampling period
		}
	}()
	waitMirrored(t, west.Addr, "east.orders.many", ends, 2*time.Minute)
	cancel()
	wg.Wait()

	t.Logf("peak buffered %.0f bytes of %d; target connections %.0f before the mirror, peak %.0f",
		peakBuffered, cfg.Mirror.BufferMemory, before, peakConns)
	if peakBuffered <= 0 || peakBuffered > float64(cfg.Mirror.BufferMemory) {
		t.Errorf("buffered bytes peaked at %.0f, want in (0, %d]", peakBuffered, cfg.Mirror.BufferMemory)
	}
	// The mirror's own connections (session client, 2 writers, each a
	// produce and a metadata connection) and the test's end-offset
	// polls; one connection per partition would be 200 more.
	if extra := peakConns - before; extra > 30 {
		t.Errorf("the target had %.0f connections more while linking %d partitions, want at most 30", extra, parts)
	}
	src, dst := readPartitions(t, east.Addr, "orders.many", ends), readPartitions(t, west.Addr, "east.orders.many", ends)
	for p := range int32(parts) {
		if !reflect.DeepEqual(src[p], dst[p]) {
			t.Fatalf("partition %d differs: %d records on the source, %d on the target", p, len(src[p]), len(dst[p]))
		}
	}
}

// gaugeValue reads an unlabelled gauge from reg.
func gaugeValue(reg *prometheus.Registry, name string) (float64, bool) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, false
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// tryMetric reads an unlabelled metric from a broker's /metrics.
func tryMetric(httpAddr, name string) (float64, bool) {
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}
