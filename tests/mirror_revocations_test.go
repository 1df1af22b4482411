package tests

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// topicACLs lists a cluster's topic ACLs as "PERMISSION principal OP resource" lines.
func topicACLs(t *testing.T, addr string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := newAdmin(t, addr).DescribeACLs(ctx, kadm.NewACLs().Topics().ResourcePatternType(kadm.ACLPatternAny).
		Allow().Deny().AllowHosts().DenyHosts().Operations(kadm.OpAny))
	if err != nil {
		t.Fatalf("describe ACLs: %v", err)
	}
	var out []string
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("describe ACLs: %v", r.Err)
		}
		for _, d := range r.Described {
			out = append(out, fmt.Sprintf("%s %s %s %s", d.Permission, d.Principal, d.Operation, d.Name))
		}
	}
	sort.Strings(out)
	return out
}

func dynamicTopicConfigs(t *testing.T, addr, topic string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rcs, err := newAdmin(t, addr).DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("describe configs of %s: %v", topic, err)
	}
	out := map[string]string{}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
				out[c.Key] = *c.Value
			}
		}
	}
	return out
}

// TestMirrorRevocations: the ACL sync copies DENY as well as ALLOW ACLs,
// and an ACL deleted on the source is deleted on the target, also by a
// mirror restarted since it created it, while an ACL created on the target
// by someone else stays; a topic config override deleted on the source is
// deleted on the target.
func TestMirrorRevocations(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	authz := func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
	}
	east := startBroker(t, fastLog, authz)
	west := startBroker(t, fastLog, authz)
	createTopic(t, east.Addr, "orders", 1, map[string]*string{"retention.ms": strp("3600000")})
	allowAlice := kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("orders").Operations(kadm.OpRead)
	denyBob := kadm.NewACLs().Deny("User:bob").DenyHosts("*").Topics("orders").Operations(kadm.OpRead)
	denyCarol := kadm.NewACLs().Deny("User:carol").DenyHosts("*").Topics("orders").Operations(kadm.OpAll)
	for _, b := range []*kadm.ACLBuilder{allowAlice, denyBob, denyCarol} {
		aclOrFail(t, east.Addr, true, b)
	}
	createTopic(t, west.Addr, "east.orders", 1, nil)
	// Someone else's ACL on the target, the same as a mirrored one.
	aclOrFail(t, west.Addr, true, kadm.NewACLs().Allow("User:dave").AllowHosts("*").Topics("east.orders").Operations(kadm.OpRead))
	aclOrFail(t, east.Addr, true, kadm.NewACLs().Allow("User:dave").AllowHosts("*").Topics("orders").Operations(kadm.OpRead))

	_, cfg := mirrorConfig(t, east.Addr, west.Addr, "copy", "")
	m := startMirror(t, cfg)
	want := []string{"ALLOW User:alice READ east.orders", "ALLOW User:dave READ east.orders",
		"DENY User:bob READ east.orders", "DENY User:carol READ east.orders"}
	eventually(t, 30*time.Second, "ALLOW and DENY ACLs reach the target", func() error {
		if got := topicACLs(t, west.Addr); strings.Join(got, "\n") != strings.Join(want, "\n") {
			return fmt.Errorf("target ACLs %q, want %q", got, want)
		}
		if got := dynamicTopicConfigs(t, west.Addr, "east.orders")["retention.ms"]; got != "3600000" {
			return fmt.Errorf("target retention.ms %q", got)
		}
		return nil
	})
	m.stop()

	// Revoke on the source while the mirror is down; a new mirror process
	// knows which target ACLs it created.
	for _, b := range []*kadm.ACLBuilder{allowAlice, denyBob,
		kadm.NewACLs().Allow("User:dave").AllowHosts("*").Topics("orders").Operations(kadm.OpRead)} {
		aclOrFail(t, east.Addr, false, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resps, err := newAdmin(t, east.Addr).AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "retention.ms"}}, "orders")
	if err == nil {
		_, err = resps.On("orders", nil)
	}
	if err != nil {
		t.Fatalf("delete retention.ms on the source: %v", err)
	}
	startMirror(t, cfg)
	want = []string{"ALLOW User:dave READ east.orders", "DENY User:carol READ east.orders"}
	eventually(t, 30*time.Second, "revocations reach the target", func() error {
		if got := topicACLs(t, west.Addr); strings.Join(got, "\n") != strings.Join(want, "\n") {
			return fmt.Errorf("target ACLs %q, want %q", got, want)
		}
		if got, ok := dynamicTopicConfigs(t, west.Addr, "east.orders")["retention.ms"]; ok {
			return fmt.Errorf("target still overrides retention.ms = %q", got)
		}
		return nil
	})
}
