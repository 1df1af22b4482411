package api_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
)

// adminTimeout bounds every request of the admin tests; a broker that does
// not answer fails the test instead of hanging it.
const adminTimeout = 20 * time.Second

// adminEnv is a real broker on a loopback port with a franz-go client.
type adminEnv struct {
	t   *testing.T
	cfg config.Config
	cl  *kgo.Client
	adm *kadm.Client
}

// startAdminBroker runs a broker in this process with its data in a fresh
// directory, and stops it when the test ends.
func startAdminBroker(t *testing.T, modify ...func(*config.Config)) *adminEnv {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = ""
	cfg.Log.Durability = config.DurabilityPageCache
	for _, m := range modify {
		m(&cfg)
	}
	srv, err := server.New(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("broker Run: %v", err)
		}
	})
	cfg.Listeners.Kafka = srv.KafkaAddr()
	e := &adminEnv{t: t, cfg: cfg}
	e.cl = e.client()
	e.adm = kadm.NewClient(e.cl)
	return e
}

// client opens another client to the broker, closed when the test ends.
func (e *adminEnv) client(opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(e.cfg.Listeners.Kafka),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequestRetries(0),
	}, opts...)...)
	if err != nil {
		e.t.Fatalf("kgo.NewClient: %v", err)
	}
	e.t.Cleanup(cl.Close)
	return cl
}

// clientAt opens a client that sends API key at most at version max.
func (e *adminEnv) clientAt(key, max int16) *kgo.Client {
	v := kversion.Stable()
	v.SetMaxKeyVersion(key, max)
	return e.client(kgo.MaxVersions(v))
}

func (e *adminEnv) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	e.t.Cleanup(cancel)
	return ctx
}

// request sends a raw request on cl (the default client if nil).
func (e *adminEnv) request(cl *kgo.Client, req kmsg.Request) kmsg.Response {
	e.t.Helper()
	if cl == nil {
		cl = e.cl
	}
	resp, err := cl.Request(e.ctx(), req)
	if err != nil {
		e.t.Fatalf("%s request: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// requestBroker sends a raw request to this broker itself: franz-go would
// otherwise route a broker resource to the broker it names
// (or, for partition requests, to the leader of partitions it knows).
func (e *adminEnv) requestBroker(cl *kgo.Client, req kmsg.Request) kmsg.Response {
	e.t.Helper()
	if cl == nil {
		cl = e.cl
	}
	if err := cl.Ping(e.ctx()); err != nil { // loads the broker list
		e.t.Fatalf("ping: %v", err)
	}
	resp, err := cl.Broker(int(e.cfg.NodeID)).Request(e.ctx(), req)
	if err != nil {
		e.t.Fatalf("%s request: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// createTopic creates a topic with the given partitions and overrides.
func (e *adminEnv) createTopic(name string, partitions int32, configs map[string]*string) kadm.CreateTopicResponse {
	e.t.Helper()
	res, err := e.adm.CreateTopic(e.ctx(), partitions, 1, configs, name)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		e.t.Fatalf("create topic %s: %v", name, err)
	}
	return res
}

// produce writes n records to one partition and returns the last offset.
func (e *adminEnv) produce(topic string, partition int32, n int) int64 {
	e.t.Helper()
	var last int64
	for i := 0; i < n; i++ {
		// Keyed: compacted topics refuse keyless records.
		r := &kgo.Record{Topic: topic, Partition: partition, Key: []byte(strconv.Itoa(i)), Value: []byte("value")}
		res := e.cl.ProduceSync(e.ctx(), r)
		if err := res.FirstErr(); err != nil {
			e.t.Fatalf("produce to %s-%d: %v", topic, partition, err)
		}
		last = r.Offset
	}
	return last
}

// wantCode fails the test unless got is the Kafka error want (nil: no error).
func adminWantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	var wantCode int16
	if want != nil {
		wantCode = want.Code
	}
	if got != wantCode {
		t.Errorf("%s: error %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

func adminStr(s string) *string { return &s }
