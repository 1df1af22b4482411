package tests

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// kafkaTools finds Apache Kafka's jars (scripts/kafka-ref.sh fetch puts
// them under .cache/kafka) and java; ok is false when either is missing.
func kafkaTools(t *testing.T) (script string, ok bool) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("GREGOR_CACHE")
	if cache == "" {
		cache = filepath.Join(root, ".cache")
	}
	version := os.Getenv("KAFKA_VERSION")
	if version == "" {
		version = "4.4.0"
	}
	if _, err := os.Stat(filepath.Join(cache, "kafka", version, "libs", ".complete")); err != nil {
		return "", false
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", false
	}
	return filepath.Join(root, "scripts", "kafka-ref.sh"), true
}

// TestKafkaSecurityTools runs Apache Kafka's kafka-configs (SCRAM users and
// quotas) and kafka-acls against Gregor, and checks with a Kafka client that
// what they set is what the broker enforces. It needs the Kafka jars
// (scripts/kafka-ref.sh fetch) and java; each tool starts a JVM, so it
// takes tens of seconds (make security-tools runs it alone).
func TestKafkaSecurityTools(t *testing.T) {
	script, ok := kafkaTools(t)
	if !ok {
		t.Skip("Apache Kafka's jars or java are missing (scripts/kafka-ref.sh fetch)")
	}
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
	})
	createTopic(t, b.Addr, "tools-orders", 1, nil)
	tool := func(want string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, script, append(args[:1:1], append([]string{"--bootstrap-server", b.Addr}, args[1:]...)...)...)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) || strings.Contains(string(out), "Exception") {
			t.Fatalf("%s: %v\nwant %q in:\n%s", strings.Join(args, " "), err, want, out)
		}
		return string(out)
	}
	produce := func(user, pw, mech string) error {
		// Not idempotent: without WRITE on any topic an idempotent
		// producer is refused earlier, on the cluster (as in Kafka).
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms(user, pw)[mech]),
			kgo.RequestRetries(0), kgo.RecordRetries(1), kgo.DisableIdempotentWrite())
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "tools-orders", Value: []byte("v")}).FirstErr()
	}

	// SCRAM users.
	tool("Completed updating config for user alice", "kafka-configs", "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-pw],SCRAM-SHA-512=[password=alice-pw]")
	tool("SCRAM-SHA-256=iterations=8192", "kafka-configs", "--describe", "--entity-type", "users", "--entity-name", "alice")

	// ACLs: alice may write once kafka-acls says so.
	if err := produce("alice", "alice-pw", "SCRAM-SHA-256"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice before her ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	tool("Adding ACLs for resource", "kafka-acls", "--add", "--allow-principal", "User:alice",
		"--operation", "Write", "--operation", "Describe", "--topic", "tools-orders")
	out := tool("User:alice", "kafka-acls", "--list", "--topic", "tools-orders")
	if !strings.Contains(out, "WRITE") || !strings.Contains(out, "DESCRIBE") {
		t.Fatalf("kafka-acls --list:\n%s", out)
	}
	if err := produce("alice", "alice-pw", "SCRAM-SHA-512"); err != nil {
		t.Fatalf("alice with her ACL: %v", err)
	}

	// Quotas.
	tool("Completed updating config for user alice", "kafka-configs", "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048")
	tool("Completed updating default config for clients", "kafka-configs", "--alter", "--entity-type", "clients", "--entity-default",
		"--add-config", "request_percentage=50")
	out = tool("producer_byte_rate=1024", "kafka-configs", "--describe", "--entity-type", "users", "--entity-name", "alice")
	if !strings.Contains(out, "consumer_byte_rate=2048") {
		t.Fatalf("kafka-configs --describe user quotas:\n%s", out)
	}
	tool("request_percentage=50", "kafka-configs", "--describe", "--entity-type", "clients", "--entity-default")

	// Removal through the tools takes effect.
	tool("Completed updating config for user alice", "kafka-configs", "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--delete-config", "SCRAM-SHA-512")
	if err := produce("alice", "alice-pw", "SCRAM-SHA-512"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("alice with a deleted SCRAM-SHA-512 credential: %v", err)
	}
	tool("", "kafka-acls", "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "tools-orders")
	if err := produce("alice", "alice-pw", "SCRAM-SHA-256"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice after her ACL was removed: %v", err)
	}
}
