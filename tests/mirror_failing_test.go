package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/mirror"
)

// aclOrFail creates or deletes ACLs on addr and fails the test on any error.
func aclOrFail(t *testing.T, addr string, create bool, b *kadm.ACLBuilder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := newAdmin(t, addr)
	if create {
		res, err := adm.CreateACLs(ctx, b)
		if err == nil {
			for _, r := range res {
				if r.Err != nil {
					err = r.Err
				}
			}
		}
		if err != nil {
			t.Fatalf("create ACLs: %v", err)
		}
		return
	}
	res, err := adm.DeleteACLs(ctx, b)
	if err == nil {
		for _, r := range res {
			if r.Err != nil {
				err = r.Err
			}
		}
	}
	if err != nil {
		t.Fatalf("delete ACLs: %v", err)
	}
}

// TestMirrorFailingPartitionBacksOff denies the mirror's principal WRITE on
// one target topic: that partition goes to the failing state with the
// authorization error and is retried with a growing backoff while the other
// topic keeps flowing and no session restarts; once the DENY is deleted the
// partition resumes and copies everything, once.
func TestMirrorFailingPartitionBacksOff(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	east := startBroker(t, fastLog)
	west, secure := startSecureBroker(t, "SASL_PLAINTEXT", fastLog, func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
	})
	createSCRAMUsers(t, west.Addr, map[string]string{"mirror": "m-pw"})
	aclOrFail(t, west.Addr, true, kadm.NewACLs().Allow("User:mirror").AllowHosts("*").
		Topics("east.").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpAll))
	aclOrFail(t, west.Addr, true, kadm.NewACLs().Allow("User:mirror").AllowHosts("*").
		Topics("heartbeats").Groups("*").Clusters().Operations(kadm.OpAll))
	deny := kadm.NewACLs().Deny("User:mirror").DenyHosts("*").Topics("east.orders").
		ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite)
	aclOrFail(t, west.Addr, true, deny)

	createTopic(t, east.Addr, "orders", 1, nil)
	createTopic(t, east.Addr, "orders.other", 1, nil)
	produceMirrorRecords(t, east.Addr, "orders", 0, 100)
	produceMirrorRecords(t, east.Addr, "orders.other", 0, 100)
	_, cfg := mirrorConfig(t, east.Addr, secure, "copy", "")
	cfg.Target.SecurityProtocol, cfg.Target.SASLMechanism = "SASL_PLAINTEXT", "SCRAM-SHA-256"
	cfg.Target.SASLUsername, cfg.Target.SASLPassword = "mirror", "m-pw"
	cfg.Topics.SyncACLs = false
	m := startMirror(t, cfg)

	waitMirrored(t, west.Addr, "east.orders.other", map[int32]int64{0: 100}, 30*time.Second)
	var first mirror.PartitionStatus
	eventually(t, 60*time.Second, "orders[0] fails and is retried with a longer backoff", func() error {
		ps, _ := partitionStatus(m, "orders", 0)
		if ps.State != mirror.StateFailing || !strings.Contains(ps.Error, "TOPIC_AUTHORIZATION_FAILED") || ps.RetryAt.IsZero() {
			return fmt.Errorf("status %+v", ps)
		}
		if first.Failures == 0 {
			first = ps
		}
		if ps.Failures < first.Failures+2 {
			return fmt.Errorf("%d failures so far", ps.Failures)
		}
		if gap, firstGap := ps.RetryAt.Sub(ps.FailedAt), first.RetryAt.Sub(first.FailedAt); gap <= firstGap {
			return fmt.Errorf("backoff %v after %d failures, %v after %d", gap, ps.Failures, firstGap, first.Failures)
		}
		return nil
	})
	if st := m.Status(); st.LastError != "" {
		t.Fatalf("a session failed: %s", st.LastError)
	}
	if ends := tryEndOffsets(west.Addr, "east.orders"); ends[0] != 0 {
		t.Fatalf("target east.orders ends at %v while WRITE is denied", ends)
	}

	aclOrFail(t, west.Addr, false, deny)
	waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: 100}, 90*time.Second)
	eventually(t, 30*time.Second, "orders[0] mirrors again", func() error {
		if ps, _ := partitionStatus(m, "orders", 0); ps.State != mirror.StateMirroring || ps.Failures != 0 {
			return fmt.Errorf("status %+v", ps)
		}
		return nil
	})
	got := readPartitions(t, west.Addr, "east.orders", map[int32]int64{0: 100})
	for i, r := range got[0] {
		if want := fmt.Sprintf("v%06d", i); r.Value != want {
			t.Fatalf("east.orders offset %d holds %q, want %q", i, r.Value, want)
		}
	}
}
