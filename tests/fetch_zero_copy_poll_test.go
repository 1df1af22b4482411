package tests

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/log"
)

// A long poll holds no file range while it waits: a client that pipelines
// fetches that wait (min_bytes not reached) must not pin a descriptor per
// partition per queued fetch for up to max_wait, against the broker-wide
// MaxOpenRanges budget every other consumer shares.
func TestFetchZeroCopyLongPollHoldsNoRanges(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.Listeners.HTTP = "127.0.0.1:0" })
	createTopic(t, b.Addr, "zc-poll", 1, nil)
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "zc-poll", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", b.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("poll"))
	base := log.OpenRanges()
	const n = 5
	var out []byte
	for i := range n {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 11
		req.ReplicaID = -1
		req.MaxWaitMillis = 3000
		req.MinBytes = 1 << 30
		req.MaxBytes = 1 << 20
		tp := kmsg.NewFetchRequestTopic()
		tp.Topic = "zc-poll"
		p := kmsg.NewFetchRequestTopicPartition()
		p.PartitionMaxBytes = 1 << 20
		p.LogStartOffset = -1
		tp.Partitions = append(tp.Partitions, p)
		req.Topics = append(req.Topics, tp)
		out = append(out, f.AppendRequest(nil, req, int32(i))...)
	}
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	// Every fetch read and waiting: their bytes are all queued, unanswered
	// (the first answer comes at max_wait).
	waitMetric(t, b.HTTPAddr, "gregor_queued_request_bytes", 2*time.Second, func(v float64) bool { return v >= float64(len(out)) })
	if held := log.OpenRanges() - base; held > 0 {
		t.Fatalf("%d file ranges held by %d waiting fetches", held, n)
	}
}
