package tests

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/gregorbroker/gregor/core/config"
)

// startSecureBroker starts a broker whose main listener is PLAINTEXT (for
// set-up) and adds an extra SASL listener, whose address it returns.
func startSecureBroker(t *testing.T, proto string, modify ...func(*config.Config)) (*inProcessBroker, string) {
	t.Helper()
	secure := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b := startBroker(t, append([]func(*config.Config){func(c *config.Config) {
		c.Listeners.Extra = []config.ExtraListener{{Name: "SECURE", Address: secure, Protocol: proto}}
		c.Security.SASLMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
	}}, modify...)...)
	return b, secure
}

func createSCRAMUsers(t *testing.T, addr string, users map[string]string) {
	t.Helper()
	adm := newAdmin(t, addr)
	var ups []kadm.UpsertSCRAM
	for u, pw := range users {
		ups = append(ups,
			kadm.UpsertSCRAM{User: u, Mechanism: kadm.ScramSha256, Iterations: 4096, Password: pw},
			kadm.UpsertSCRAM{User: u, Mechanism: kadm.ScramSha512, Iterations: 8192, Password: pw})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := adm.AlterUserSCRAMs(ctx, nil, ups)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Error(); err != nil {
		t.Fatal(err)
	}
}

func saslMechanisms(user, pw string) map[string]sasl.Mechanism {
	return map[string]sasl.Mechanism{
		"PLAIN":         plain.Auth{User: user, Pass: pw}.AsMechanism(),
		"SCRAM-SHA-256": scram.Auth{User: user, Pass: pw}.AsSha256Mechanism(),
		"SCRAM-SHA-512": scram.Auth{User: user, Pass: pw}.AsSha512Mechanism(),
	}
}

func TestSASLProduceConsume(t *testing.T) {
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT")
	createSCRAMUsers(t, b.Addr, map[string]string{"alice": "alice-secret"})
	createTopic(t, b.Addr, "sasl-topic", 1, nil)
	for name, mech := range saslMechanisms("alice", "alice-secret") {
		t.Run(name, func(t *testing.T) {
			cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(mech), kgo.ConsumeTopics("sasl-topic"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "sasl-topic", Value: []byte(name)}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			fs := cl.PollFetches(ctx)
			if errs := fs.Errors(); len(errs) > 0 {
				t.Fatalf("fetch: %v", errs)
			}
			if fs.NumRecords() == 0 {
				t.Fatal("no records")
			}
		})
	}
	t.Run("metadata advertises the SASL listener", func(t *testing.T) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms("alice", "alice-secret")["PLAIN"]))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		brokers, err := kadm.NewClient(cl).ListBrokers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(brokers) != 1 || net.JoinHostPort(brokers[0].Host, fmt.Sprint(brokers[0].Port)) != secure {
			t.Fatalf("brokers %+v, want %s", brokers, secure)
		}
	})
	for name, mech := range saslMechanisms("alice", "wrong") {
		t.Run("wrong password "+name, func(t *testing.T) {
			cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(mech), kgo.RequestRetries(0))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = cl.Ping(ctx)
			if !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("ping: %v, want SASL_AUTHENTICATION_FAILED", err)
			}
		})
	}
	t.Run("no SASL on a SASL listener", func(t *testing.T) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.RequestRetries(0), kgo.DialTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := kadm.NewClient(cl).ListTopics(ctx); err == nil {
			t.Fatal("metadata answered before authentication")
		}
	})
	t.Run("describe credentials", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		d, err := newAdmin(t, b.Addr).DescribeUserSCRAMs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, ok := d["alice"]
		if !ok || a.Err != nil || len(a.CredInfos) != 2 || a.CredInfos[1].Iterations != 8192 {
			t.Fatalf("described %+v", d)
		}
		if _, err := newAdmin(t, b.Addr).DescribeUserSCRAMs(ctx, "nobody"); err == nil {
			if d, _ := newAdmin(t, b.Addr).DescribeUserSCRAMs(ctx, "nobody"); d["nobody"].Err == nil {
				t.Fatal("unknown user described")
			}
		}
	})
}
