package tests

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

func TestACLsEndToEnd(t *testing.T) {
	// The loopback PLAINTEXT listener is the bootstrap path: its anonymous
	// principal is a super user here; clients use the SASL listener.
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
	})
	createSCRAMUsers(t, b.Addr, map[string]string{"alice": "a-pw", "bob": "b-pw"})
	createTopic(t, b.Addr, "orders", 1, nil)
	createTopic(t, b.Addr, "secret", 1, nil)
	adm := newAdmin(t, b.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acls := kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("orders").
		Operations(kadm.OpWrite, kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)
	created, err := adm.CreateACLs(ctx, acls)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range created {
		if c.Err != nil {
			t.Fatalf("create acl: %v", c.Err)
		}
	}

	client := func(user, pw string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms(user, pw)["SCRAM-SHA-256"]),
			kgo.AllowAutoTopicCreation(), kgo.RequestRetries(1), kgo.RecordRetries(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	produce := func(cl *kgo.Client, topic string) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
	}
	alice, bob := client("alice", "a-pw"), client("bob", "b-pw")
	if err := produce(alice, "orders"); err != nil {
		t.Fatalf("alice → orders: %v", err)
	}
	if err := produce(alice, "secret"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice → secret: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if err := produce(bob, "orders"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob → orders: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	listed := func(cl *kgo.Client) []string {
		td, err := kadm.NewClient(cl).ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return td.Names()
	}
	if got := listed(alice); len(got) != 1 || got[0] != "orders" {
		t.Fatalf("alice sees %v, want [orders]", got)
	}
	if got := listed(bob); len(got) != 0 {
		t.Fatalf("bob sees %v, want nothing", got)
	}
	// ACL administration needs ALTER on the cluster.
	if _, err := kadm.NewClient(bob).CreateACLs(ctx, kadm.NewACLs().Allow("User:bob").AllowHosts("*").Topics("secret").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)); err == nil {
		res, _ := kadm.NewClient(bob).DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny))
		for _, r := range res {
			if r.Err == nil {
				t.Fatal("bob described ACLs without DESCRIBE on the cluster")
			}
		}
	}

	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().Allow("User:alice").AnyResource().
		ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny).AllowHosts())
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 1 || described[0].Err != nil || len(described[0].Described) != 2 {
		t.Fatalf("described %+v", described)
	}
	deleted, err := adm.DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").
		ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite).AllowHosts())
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0].Err != nil || len(deleted[0].Deleted) != 1 {
		t.Fatalf("deleted %+v", deleted)
	}
	if err := produce(alice, "orders"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice → orders after the ACL was deleted: %v", err)
	}
}

func TestACLAPIsWithoutAuthorizer(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.SecurityDisabled.Code {
		t.Fatalf("error code %d, want SECURITY_DISABLED", resp.ErrorCode)
	}
}
