package server

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/internal/testport"
)

// testPKI is a CA and leaf certificates for 127.0.0.1, valid for servers
// and clients, written as PEM files.
type testPKI struct {
	t      *testing.T
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caFile string
	pool   *x509.CertPool
	serial int64
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{t: t, dir: t.TempDir(), serial: 1}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gregor test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if p.ca, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	p.caKey, p.pool = key, x509.NewCertPool()
	p.pool.AddCert(p.ca)
	p.caFile = p.write("ca.pem", "CERTIFICATE", der)
	return p
}

func (p *testPKI) write(name, typ string, b []byte) string {
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// issue writes a certificate and key for CN=cn and returns their files.
func (p *testPKI) issue(cn string) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	p.serial++
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		p.t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.write(cn+".pem", "CERTIFICATE", der), p.write(cn+".key", "EC PRIVATE KEY", keyDER)
}

// clientTLS trusts the CA and presents CN=cn.
func (p *testPKI) clientTLS(cn string) *tls.Config {
	certFile, keyFile := p.issue(cn)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		p.t.Fatal(err)
	}
	return &tls.Config{RootCAs: p.pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	// A port from :0 is in the ephemeral range: another node's :0 listener
	// or any outgoing connection may take it before the node binds it.
	return testport.Addr(t)
}

// poll calls cond until it holds, failing the test at the deadline.
func poll(t *testing.T, ctx context.Context, what string, cond func() error) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-tick.C:
		}
	}
}

// A 3-node cluster replicates over a secured listener with required client
// certificates and the ACL authorizer: on SASL_SSL followers authenticate
// as the super user "replica" with SCRAM, on SSL their certificate's
// principal (User:CN=broker) is the super user. The primary PLAINTEXT
// listener only bootstraps the users and ACLs. acks=all with
// min.insync.replicas=3 succeeds only once both followers fetched each
// record through the secure listener. A client that is not a super user is
// refused replica fetches with TOPIC_AUTHORIZATION_FAILED.
func TestReplicationOverSecuredListener(t *testing.T) {
	for _, proto := range []string{config.ProtocolSASLSSL, config.ProtocolSSL} {
		t.Run(proto, func(t *testing.T) { testReplicationOverSecuredListener(t, proto) })
	}
}

func testReplicationOverSecuredListener(t *testing.T, proto string) {
	pki := newTestPKI(t)
	certFile, keyFile := pki.issue("broker")
	sasl := proto == config.ProtocolSASLSSL
	const n = 3
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	servers := startTestCluster(t, n, func(_ int32, cfg *config.Config) {
		cfg.Listeners.Extra = []config.ExtraListener{{Name: "SECURE", Address: "127.0.0.1:0", Protocol: proto}}
		cfg.Security.Authorizer = "acl"
		cfg.Security.SuperUsers = []string{"User:ANONYMOUS", "User:replica", "User:CN=broker"}
		if sasl {
			// The certificate is not the principal on SASL_SSL.
			cfg.Security.SuperUsers = []string{"User:ANONYMOUS", "User:replica"}
		}
		cfg.Security.TLSCertFile, cfg.Security.TLSKeyFile, cfg.Security.TLSCAFile = certFile, keyFile, pki.caFile
		cfg.Security.TLSClientAuth = "required"
		cfg.Cluster.InterBrokerListener = "SECURE"
		if sasl {
			cfg.Cluster.InterBrokerSASLMechanism = "SCRAM-SHA-512"
			cfg.Cluster.InterBrokerSASLUsername = "replica"
			cfg.Cluster.InterBrokerSASLPassword = "replica-secret"
		}
		cfg.Replication.ReplicaFetchWaitMaxMs = 200
	})

	plainAdm := func() *kadm.Client {
		var seeds []string
		for _, s := range servers {
			seeds = append(seeds, s.KafkaAddr())
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return kadm.NewClient(cl)
	}()
	// Every node must list all brokers; each is asked directly (a client's
	// own metadata view may lag behind).
	for id, srv := range servers {
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()))
		if err != nil {
			t.Fatal(err)
		}
		poll(t, ctx, fmt.Sprintf("node %d lists %d brokers", id, n), func() error {
			r, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl.SeedBrokers()[0])
			if err == nil && len(r.Brokers) != n {
				err = fmt.Errorf("%d brokers", len(r.Brokers))
			}
			return err
		})
		cl.Close()
	}
	res, err := plainAdm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "replica", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "replica-secret"},
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "alice-secret"},
	})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("create users: %v", err)
	}
	const topic = "secure-rf3"
	aliceUser := "User:alice"
	if !sasl {
		aliceUser = "User:CN=alice"
	}
	acls := kadm.NewACLs().Allow(aliceUser).AllowHosts("*").Topics(topic).
		Operations(kadm.OpWrite, kadm.OpRead, kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)
	if created, err := plainAdm.CreateACLs(ctx, acls); err != nil {
		t.Fatal(err)
	} else {
		for _, c := range created {
			if c.Err != nil {
				t.Fatalf("create acl: %v", c.Err)
			}
		}
	}
	three := "3"
	if r, err := plainAdm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": &three}, topic); err != nil {
		t.Fatalf("create topic: %v (%s)", err, r.ErrMessage)
	}

	var secure []string
	for _, s := range servers {
		secure = append(secure, s.ListenerAddr("SECURE"))
	}
	opts := []kgo.Opt{kgo.SeedBrokers(secure...), kgo.DialTLSConfig(pki.clientTLS("alice")),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if sasl {
		opts = append(opts, kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()))
	}
	alice, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	const records = 50
	// Acks wait for both followers; a record in flight does not end with
	// ctx in an idempotent producer, so the wait is bounded here.
	results := make(chan error, records)
	for i := range records {
		alice.Produce(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "v%d", i)}, func(_ *kgo.Record, err error) { results <- err })
	}
	for i := range records {
		select {
		case err := <-results:
			if err != nil {
				t.Fatalf("produce (acks=all, min.insync.replicas=3): %v", err)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d records acknowledged (acks=all, min.insync.replicas=3): %v", i, records, ctx.Err())
		}
	}
	poll(t, ctx, "high watermark and full ISR", func() error {
		ends, err := plainAdm.ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		if o, _ := ends.Lookup(topic, 0); o.Offset != records {
			return fmt.Errorf("high watermark %d, want %d", o.Offset, records)
		}
		md, err := plainAdm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		if p := md.Topics[topic].Partitions[0]; len(p.ISR) != n {
			return fmt.Errorf("ISR %v", p.ISR)
		}
		return nil
	})
	got := 0
	for got < records {
		fs := alice.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if want := fmt.Sprintf("v%d", got); string(r.Value) != want || r.Offset != int64(got) {
				t.Fatalf("record at %d = %q, want %q", r.Offset, r.Value, want)
			}
			got++
		})
	}

	// A replica fetch is CLUSTER_ACTION on the cluster; alice lacks it.
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.ReplicaState.ID = 2, 2
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	resp, err := req.RequestWith(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("replica fetch as alice: answer shape %+v", resp)
	}
	if p := resp.Topics[0].Partitions[0]; !errors.Is(kerr.ErrorForCode(p.ErrorCode), kerr.TopicAuthorizationFailed) || len(p.RecordBatches) != 0 {
		t.Fatalf("replica fetch as alice: %v with %d record bytes, want TOPIC_AUTHORIZATION_FAILED (Kafka's answer to a follower without CLUSTER_ACTION)",
			kerr.ErrorForCode(p.ErrorCode), len(p.RecordBatches))
	}
}

// lockedLog collects the nodes' logs; the test prints them when it fails.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
