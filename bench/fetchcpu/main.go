// Command fetchcpu measures the broker's CPU time per consumed GiB: it starts
// a gregor binary on a fresh data dir, writes a topic of incompressible
// records, then consumes it from the start several times with franz-go and
// reads the broker process's user and system CPU time from /proc around the
// consume. Compare two binaries (say, before and after a change to the fetch
// path) in one run: go run ./bench/fetchcpu --gregor old/bin/gregor --gregor bin/gregor.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type bins []string

func (b *bins) String() string     { return strings.Join(*b, ",") }
func (b *bins) Set(v string) error { *b = append(*b, v); return nil }

func main() {
	var gregors bins
	flag.Var(&gregors, "gregor", "a gregor binary to measure (repeat to compare)")
	mib := flag.Int("mib", 512, "MiB of 1 KiB records in the topic")
	passes := flag.Int("passes", 4, "times the topic is consumed from the start")
	flag.Parse()
	if len(gregors) == 0 {
		gregors = bins{"bin/gregor"}
	}
	for _, g := range gregors {
		cpu, gib, err := measure(g, *mib, *passes)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fetchcpu:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %.2f CPU seconds for %.2f GiB consumed: %.2f CPU s/GiB\n", g, cpu, gib, cpu/gib)
	}
}

func freePort() int {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// cpuSeconds is a process's user plus system time.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100, nil // USER_HZ
}

func measure(bin string, mib, passes int) (float64, float64, error) {
	dir, err := os.MkdirTemp("", "fetchcpu-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort())
	cfg := fmt.Sprintf("node_id = 1\ndata_dir = %q\n\n[listeners]\nkafka = %q\n\n[log]\ndurability = \"page_cache\"\n", filepath.Join(dir, "data"), addr)
	if err := os.WriteFile(filepath.Join(dir, "broker.toml"), []byte(cfg), 0o644); err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(bin, "serve", "--config", filepath.Join(dir, "broker.toml"))
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	for deadline := time.Now().Add(30 * time.Second); ; {
		_, err = kadm.NewClient(cl).CreateTopic(ctx, 6, 1, nil, "fetchcpu")
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the broker is starting
	}
	if err != nil {
		return 0, 0, fmt.Errorf("create topic: %w", err)
	}
	vals := make([][]byte, 256)
	for i := range vals {
		vals[i] = make([]byte, 1024)
		rand.Read(vals[i])
	}
	n := mib << 10
	done := make(chan error, n)
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Topic: "fetchcpu", Value: vals[i%len(vals)]}, func(_ *kgo.Record, err error) { done <- err })
	}
	for range n {
		if err := <-done; err != nil {
			return 0, 0, fmt.Errorf("produce: %w", err)
		}
	}
	before, err := cpuSeconds(cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	var bytes int64
	for range passes {
		c, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("fetchcpu"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(50<<20))
		if err != nil {
			return 0, 0, err
		}
		for got := 0; got < n; {
			fs := c.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				c.Close()
				return 0, 0, fmt.Errorf("consume: %w", err)
			}
			fs.EachRecord(func(r *kgo.Record) { bytes += int64(len(r.Value)) })
			got += fs.NumRecords()
		}
		c.Close()
	}
	after, err := cpuSeconds(cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	return after - before, float64(bytes) / (1 << 30), nil
}
