package tests

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// TestUserAndACLCLI drives gregor user and gregor acl against a broker with
// the ACL authorizer: users made by the CLI authenticate with a Kafka
// client, ACLs added by it are enforced, listed and removed, and the CLI
// itself connects over SASL with --sasl-* flags.
func TestUserAndACLCLI(t *testing.T) {
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
	})
	boot := "--bootstrap=" + b.Addr
	createTopic(t, b.Addr, "cli-orders", 1, nil)

	res := mustCLI(t, 0, "alice-pw\n", "user", "create", "alice", "--password-stdin", boot)
	wantContains(t, "user create", res.stdout, `user "alice": SCRAM-SHA-256, SCRAM-SHA-512 credentials set (8192 iterations)`)
	res = runCLI(t, "", []string{"GREGOR_USER_PASSWORD=ops-pw"}, "user", "create", "ops", "--mechanism", "SCRAM-SHA-512", "--iterations", "4096", boot)
	if res.code != 0 {
		t.Fatalf("user create ops: %d %s", res.code, res.stderr)
	}
	res = mustCLI(t, 0, "", "user", "list", boot)
	wantContains(t, "user list", res.stdout, "alice  SCRAM-SHA-256  8192", "alice  SCRAM-SHA-512  8192", "ops    SCRAM-SHA-512  4096")
	res = mustCLI(t, 1, "", "user", "list", "nobody", boot)
	wantContains(t, "user list nobody", res.stderr, `no such SCRAM user`)
	mustCLI(t, 2, "", "user", "create", "x", "--iterations", "10", "--password", "p", boot)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	produce := func(user, pw string) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms(user, pw)["SCRAM-SHA-512"]),
			kgo.RequestRetries(1), kgo.RecordRetries(1))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "cli-orders", Value: []byte("v")}).FirstErr()
	}
	if err := produce("alice", "alice-pw"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice before any ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	res = mustCLI(t, 0, "", "acl", "add", "--principal", "User:alice", "--operation", "write", "--topic", "cli-", "--pattern", "prefixed", boot)
	wantContains(t, "acl add", res.stdout, "added (resourceType=TOPIC, name=cli-, patternType=PREFIXED) (principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)")
	mustCLI(t, 0, "", "acl", "add", "--principal", "User:ops", "--operation", "describe", "--operation", "alter", "--cluster", boot)
	if err := produce("alice", "alice-pw"); err != nil {
		t.Fatalf("alice with WRITE on cli-*: %v", err)
	}

	// The CLI over SASL: ops may describe and alter ACLs, alice may not.
	asOps := []string{"--bootstrap=" + secure, "--sasl-mechanism=SCRAM-SHA-512", "--sasl-user=ops"}
	res = runCLI(t, "", []string{"GREGOR_SASL_PASSWORD=ops-pw"}, append([]string{"acl", "list", "--topic", "cli-orders", "--pattern", "match"}, asOps...)...)
	if res.code != 0 {
		t.Fatalf("acl list as ops: %d %s", res.code, res.stderr)
	}
	wantContains(t, "acl list match", res.stdout, "TOPIC", "cli-", "PREFIXED", "User:alice", "WRITE", "ALLOW")
	res = runCLI(t, "", []string{"GREGOR_SASL_PASSWORD=alice-pw"}, "acl", "list", "--bootstrap="+secure, "--sasl-mechanism=SCRAM-SHA-256", "--sasl-user=alice")
	if res.code != 1 || !strings.Contains(res.stderr, "not allowed") {
		t.Fatalf("acl list as alice: exit %d\n%s", res.code, res.stderr)
	}
	res = runCLI(t, "", []string{"GREGOR_SASL_PASSWORD=wrong"}, append([]string{"acl", "list"}, asOps...)...)
	if res.code == 0 {
		t.Fatalf("acl list with a wrong password succeeded:\n%s", res.stdout)
	}

	mustCLI(t, 2, "", "acl", "remove", boot)
	res = runCLI(t, "", []string{"GREGOR_SASL_PASSWORD=ops-pw"}, append([]string{"acl", "remove", "--principal", "User:alice", "--topic", "cli-"}, asOps...)...)
	if res.code != 0 {
		t.Fatalf("acl remove as ops: %d %s", res.code, res.stderr)
	}
	wantContains(t, "acl remove", res.stdout, "removed (resourceType=TOPIC, name=cli-, patternType=PREFIXED) (principal=User:alice")
	if err := produce("alice", "alice-pw"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice after the ACL was removed: %v", err)
	}
	res = mustCLI(t, 0, "", "acl", "list", boot)
	if strings.Contains(res.stdout, "User:alice") || !strings.Contains(res.stdout, "User:ops") {
		t.Fatalf("acl list after remove:\n%s", res.stdout)
	}

	res = mustCLI(t, 0, "", "user", "delete", "alice", boot)
	wantContains(t, "user delete", res.stdout, `user "alice" deleted`)
	if err := produce("alice", "alice-pw"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("deleted alice: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	mustCLI(t, 1, "", "user", "delete", "alice", boot)
}
