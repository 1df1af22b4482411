package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509/pkix"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// consumeZC reads n records of topic from the start with a franz-go
// consumer, in partition order, with the given options.
func consumeZC(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(4 << 20)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consumed %d of %d: %v", len(got), n, err)
		}
		got = append(got, fs.Records()...)
	}
	return got
}

// Records fetched over a plain listener go from the segment files to the
// socket by sendfile; over TLS they are copied. Both deliver exactly what
// was produced, and read_committed still drops an aborted transaction.
func TestFetchZeroCopy(t *testing.T) {
	pki := newTestPKI(t)
	certFile, keyFile, _ := pki.issue("server", pkix.Name{CommonName: "gregor-broker"}, true)
	ssl := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b := startBroker(t, func(c *config.Config) {
		c.Listeners.HTTP = "127.0.0.1:0"
		c.Listeners.Extra = []config.ExtraListener{{Name: "SSL", Address: ssl, Protocol: "SSL"}}
		c.Security.TLSCertFile, c.Security.TLSKeyFile, c.Security.TLSCAFile = certFile, keyFile, pki.CAFile
	})
	createTopic(t, b.Addr, "zc", 3, nil)
	const n = 3000
	var want []*kgo.Record
	for i := range n {
		v := make([]byte, 1024)
		rand.Read(v)
		want = append(want, &kgo.Record{Topic: "zc", Key: []byte(fmt.Sprint("key-", i%97)), Value: v})
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := prod.ProduceSync(ctx, want...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	byOffset := func(rs []*kgo.Record) map[string][]byte {
		m := map[string][]byte{}
		for _, r := range rs {
			m[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = append(append([]byte(nil), r.Key...), r.Value...)
		}
		return m
	}
	produced := byOffset(want)
	check := func(name string, got []*kgo.Record) {
		t.Helper()
		g := byOffset(got)
		if len(g) != len(produced) {
			t.Fatalf("%s: %d distinct records, want %d", name, len(g), len(produced))
		}
		for k, v := range produced {
			if !bytes.Equal(g[k], v) {
				t.Fatalf("%s: record %s differs from what was produced", name, k)
			}
		}
	}

	before := metric(t, b.HTTPAddr, "gregor_network_bytes_sendfile_total")
	check("PLAINTEXT", consumeZC(t, b.Addr, "zc", n))
	plain := metric(t, b.HTTPAddr, "gregor_network_bytes_sendfile_total") - before
	if plain < n*1024 {
		t.Fatalf("PLAINTEXT consumer: %v bytes went by sendfile, want at least the %d record bytes", plain, n*1024)
	}

	before = metric(t, b.HTTPAddr, "gregor_network_bytes_sendfile_total")
	check("SSL", consumeZC(t, ssl, "zc", n, kgo.DialTLSConfig(pki.clientTLS(""))))
	if d := metric(t, b.HTTPAddr, "gregor_network_bytes_sendfile_total") - before; d != 0 {
		t.Fatalf("SSL consumer: %v bytes went by sendfile, want none (TLS encrypts a copy)", d)
	}

	// read_committed over the range path: the aborted transaction's
	// records stay out, the committed ones arrive.
	createTopic(t, b.Addr, "zc-txn", 1, nil)
	txp, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.TransactionalID("zc-tx"), kgo.DefaultProduceTopic("zc-txn"))
	if err != nil {
		t.Fatal(err)
	}
	defer txp.Close()
	for _, commit := range []bool{false, true} {
		if err := txp.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := txp.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("commit=%v %d", commit, i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txp.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	got := consumeZC(t, b.Addr, "zc-txn", 10, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	for _, r := range got {
		if !bytes.HasPrefix(r.Value, []byte("commit=true")) {
			t.Fatalf("read_committed delivered %q from the aborted transaction", r.Value)
		}
	}
}
