package tests

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	kgoplain "github.com/segmentio/kafka-go/sasl/plain"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// tlsBroker is a broker with a PLAINTEXT set-up listener (whose anonymous
// principal is a super user) and SSL and SASL_SSL listeners sharing one
// server certificate.
type tlsBroker struct {
	b               *inProcessBroker
	pki             *testPKI
	ssl, saslSSL    string
	certFile, keyFl string
}

func startTLSBroker(t *testing.T, clientAuth string) *tlsBroker {
	t.Helper()
	pki := newTestPKI(t)
	certFile, keyFile, _ := pki.issue("server", pkix.Name{CommonName: "gregor-broker"}, true)
	tb := &tlsBroker{pki: pki, certFile: certFile, keyFl: keyFile,
		ssl:     fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		saslSSL: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
	}
	tb.b = startBroker(t, func(c *config.Config) {
		c.Listeners.Extra = []config.ExtraListener{
			{Name: "SSL", Address: tb.ssl, Protocol: "SSL"},
			{Name: "SECURE", Address: tb.saslSSL, Protocol: "SASL_SSL"},
		}
		c.Security.SASLMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
		c.Security.TLSCertFile, c.Security.TLSKeyFile, c.Security.TLSCAFile = certFile, keyFile, pki.CAFile
		c.Security.TLSClientAuth = clientAuth
		// OU=eng subjects map to their lower-cased common name; others keep
		// the whole distinguished name.
		c.Security.PrincipalMappingRules = "RULE:^CN=([^,]+),OU=eng,.*$/$1/L,DEFAULT"
	})
	return tb
}

func addACL(t *testing.T, addr string, b *kadm.ACLBuilder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := newAdmin(t, addr).CreateACLs(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create acl: %v", r.Err)
		}
	}
}

// kgoRoundTrip produces one record and reads it back with franz-go.
func kgoRoundTrip(t *testing.T, addr, topic string, opts ...kgo.Opt) error {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RequestRetries(1), kgo.RecordRetries(1),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("over tls")}).FirstErr(); err != nil {
		return err
	}
	fs := cl.PollRecords(ctx, 1)
	if err := fs.Err0(); err != nil {
		return err
	}
	if fs.NumRecords() == 0 {
		return errors.New("no record read back")
	}
	return nil
}

func TestTLSAndSASLSSL(t *testing.T) {
	tb := startTLSBroker(t, "requested")
	createTopic(t, tb.b.Addr, "tls-topic", 1, nil)
	createSCRAMUsers(t, tb.b.Addr, map[string]string{"carol": "carol-pw"})
	addACL(t, tb.b.Addr, kadm.NewACLs().Allow("User:alice", "User:carol").AllowHosts("*").Topics("tls-topic").
		Operations(kadm.OpWrite, kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	addACL(t, tb.b.Addr, kadm.NewACLs().Allow("User:alice", "User:carol").AllowHosts("*").Groups("*").
		Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	tb.pki.issue("alice", pkix.Name{CommonName: "Alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Gregor"}}, false)
	tb.pki.issue("bob", pkix.Name{CommonName: "Bob", OrganizationalUnit: []string{"ops"}, Organization: []string{"Gregor"}}, false)

	t.Run("SSL without a client certificate is anonymous", func(t *testing.T) {
		if err := kgoRoundTrip(t, tb.ssl, "tls-topic", kgo.DialTLSConfig(tb.pki.clientTLS(""))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("mTLS principal from a mapping rule", func(t *testing.T) {
		if err := kgoRoundTrip(t, tb.ssl, "tls-topic", kgo.DialTLSConfig(tb.pki.clientTLS("alice"))); err != nil {
			t.Fatalf("alice (CN=Alice,OU=eng → User:alice): %v", err)
		}
	})
	t.Run("mTLS principal by DEFAULT is the whole subject", func(t *testing.T) {
		err := kgoRoundTrip(t, tb.ssl, "tls-topic", kgo.DialTLSConfig(tb.pki.clientTLS("bob")))
		if !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Fatalf("bob before his ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
		addACL(t, tb.b.Addr, kadm.NewACLs().Allow("User:CN=Bob,OU=ops,O=Gregor").AllowHosts("*").Topics("tls-topic").
			Operations(kadm.OpWrite, kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
		addACL(t, tb.b.Addr, kadm.NewACLs().Allow("User:CN=Bob,OU=ops,O=Gregor").AllowHosts("*").Groups("*").
			Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
		if err := kgoRoundTrip(t, tb.ssl, "tls-topic", kgo.DialTLSConfig(tb.pki.clientTLS("bob"))); err != nil {
			t.Fatalf("bob with an ACL for his subject: %v", err)
		}
	})
	t.Run("an untrusted server certificate is refused", func(t *testing.T) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tb.ssl), kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.Ping(ctx); err == nil {
			t.Fatal("a client that does not trust the test CA connected")
		}
	})
	t.Run("plaintext on the SSL listener is refused", func(t *testing.T) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tb.ssl), kgo.RequestRetries(0), kgo.DialTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.Ping(ctx); err == nil {
			t.Fatal("a plaintext client was answered on the SSL listener")
		}
	})
	for name, mech := range saslMechanisms("carol", "carol-pw") {
		t.Run("SASL_SSL franz-go "+name, func(t *testing.T) {
			if err := kgoRoundTrip(t, tb.saslSSL, "tls-topic", kgo.DialTLSConfig(tb.pki.clientTLS("")), kgo.SASL(mech)); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("SASL_SSL wrong password", func(t *testing.T) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tb.saslSSL), kgo.DialTLSConfig(tb.pki.clientTLS("")),
			kgo.SASL(saslMechanisms("carol", "nope")["SCRAM-SHA-512"]), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("%v, want SASL_AUTHENTICATION_FAILED", err)
		}
	})
	t.Run("SASL_SSL principal is the SASL user, not the certificate", func(t *testing.T) {
		// carol presents alice's certificate; the ACLs she meets are hers.
		err := kgoRoundTrip(t, tb.saslSSL, "tls-topic", kgo.DialTLSConfig(tb.pki.clientTLS("alice")),
			kgo.SASL(saslMechanisms("carol", "carol-pw")["PLAIN"]))
		if err != nil {
			t.Fatal(err)
		}
	})
	createSCRAMUsers(t, tb.b.Addr, map[string]string{"alice": "alice-pw"})
	for _, listener := range []struct {
		name, addr string
		sasl       bool
	}{{"SSL", tb.ssl, false}, {"SASL_SSL", tb.saslSSL, true}} {
		t.Run("sarama "+listener.name, func(t *testing.T) {
			cfg := saramaConfig()
			cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, tb.pki.clientTLS("alice")
			if listener.sasl {
				cfg.Net.SASL.Enable, cfg.Net.SASL.Mechanism = true, sarama.SASLTypePlaintext
				cfg.Net.SASL.User, cfg.Net.SASL.Password = "alice", "alice-pw"
			}
			saramaRoundTrip(t, listener.addr, "tls-topic", cfg)
		})
		t.Run("kafka-go "+listener.name, func(t *testing.T) {
			tr := &kafka.Transport{TLS: tb.pki.clientTLS("alice"), MetadataTTL: time.Second}
			d := &kafka.Dialer{TLS: tb.pki.clientTLS("alice"), Timeout: 10 * time.Second}
			if listener.sasl {
				tr.SASL = kgoplain.Mechanism{Username: "alice", Password: "alice-pw"}
				d.SASLMechanism = tr.SASL
			}
			kafkaGoRoundTrip(t, listener.addr, "tls-topic", tr, d)
		})
	}
}

func saramaRoundTrip(t *testing.T, addr, topic string, cfg *sarama.Config) {
	t.Helper()
	p, err := sarama.NewSyncProducer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	part, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("sarama")})
	p.Close()
	if err != nil {
		t.Fatalf("sarama send: %v", err)
	}
	c, err := sarama.NewConsumer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, part, off)
	if err != nil {
		t.Fatalf("sarama consume: %v", err)
	}
	defer pc.Close()
	select {
	case m := <-pc.Messages():
		if string(m.Value) != "sarama" {
			t.Fatalf("read %q", m.Value)
		}
	case err := <-pc.Errors():
		t.Fatalf("sarama consume: %v", err)
	case <-time.After(clientTimeout):
		t.Fatal("sarama read nothing")
	}
}

func kafkaGoRoundTrip(t *testing.T, addr, topic string, tr *kafka.Transport, d *kafka.Dialer) {
	t.Helper()
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Transport: tr, Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte("kafka-go")}); err != nil {
		w.Close()
		t.Fatalf("kafka-go write: %v", err)
	}
	w.Close()
	conn, err := d.DialLeader(ctx, "tcp", addr, topic, 0)
	if err != nil {
		t.Fatalf("kafka-go dial: %v", err)
	}
	defer conn.Close()
	last, err := conn.ReadLastOffset()
	if err != nil {
		t.Fatalf("kafka-go last offset: %v", err)
	}
	if _, err := conn.Seek(last-1, kafka.SeekAbsolute); err != nil {
		t.Fatalf("kafka-go seek: %v", err)
	}
	conn.SetReadDeadline(time.Now().Add(clientTimeout))
	m, err := conn.ReadMessage(1 << 20)
	if err != nil {
		t.Fatalf("kafka-go read: %v", err)
	}
	if string(m.Value) != "kafka-go" {
		t.Fatalf("read %q", m.Value)
	}
}

func TestTLSClientAuthRequired(t *testing.T) {
	tb := startTLSBroker(t, "required")
	createTopic(t, tb.b.Addr, "mtls-topic", 1, nil)
	tb.pki.issue("alice", pkix.Name{CommonName: "Alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Gregor"}}, false)
	addACL(t, tb.b.Addr, kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("mtls-topic").
		Operations(kadm.OpWrite, kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	addACL(t, tb.b.Addr, kadm.NewACLs().Allow("User:alice").AllowHosts("*").Groups("*").
		Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	if err := kgoRoundTrip(t, tb.ssl, "mtls-topic", kgo.DialTLSConfig(tb.pki.clientTLS("alice"))); err != nil {
		t.Fatalf("with a certificate: %v", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.ssl), kgo.DialTLSConfig(tb.pki.clientTLS("")), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err == nil {
		t.Fatal("a client without a certificate was answered although one is required")
	}
}

// TestTLSCertificateReload replaces the server certificate on disk and
// watches new handshakes pick it up without a restart, while a connection
// opened before keeps working.
func TestTLSCertificateReload(t *testing.T) {
	tb := startTLSBroker(t, "none")
	createTopic(t, tb.b.Addr, "reload-topic", 1, nil)
	served := func() (*big.Int, error) {
		d := &net.Dialer{Timeout: 5 * time.Second}
		c, err := tls.DialWithDialer(d, "tcp", tb.ssl, tb.pki.clientTLS(""))
		if err != nil {
			return nil, err
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber, nil
	}
	before, err := served()
	if err != nil {
		t.Fatal(err)
	}
	early, err := kgo.NewClient(kgo.SeedBrokers(tb.ssl), kgo.DialTLSConfig(tb.pki.clientTLS("")))
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := early.ProduceSync(ctx, &kgo.Record{Topic: "reload-topic", Value: []byte("1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	_, _, want := tb.pki.issue("server", pkix.Name{CommonName: "gregor-broker-rotated"}, true)
	if want.Cmp(before) == 0 {
		t.Fatal("the new certificate has the old serial")
	}
	eventually(t, 15*time.Second, "the broker serves the new certificate", func() error {
		got, err := served()
		if err != nil {
			return err
		}
		if got.Cmp(want) != 0 {
			return fmt.Errorf("serial %v, want %v", got, want)
		}
		return nil
	})
	if err := early.ProduceSync(ctx, &kgo.Record{Topic: "reload-topic", Value: []byte("2")}).FirstErr(); err != nil {
		t.Fatalf("a connection from before the reload: %v", err)
	}
	if err := kgoRoundTrip(t, tb.ssl, "reload-topic", kgo.DialTLSConfig(tb.pki.clientTLS(""))); err != nil {
		t.Fatalf("a new client after the reload: %v", err)
	}
}
