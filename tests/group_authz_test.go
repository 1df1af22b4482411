package tests

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// ConsumerGroupHeartbeat needs READ on the group and DESCRIBE on the
// subscribed topics; ConsumerGroupDescribe needs DESCRIBE on the group.
func TestGroupConsumerProtocolAuthorization(t *testing.T) {
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
		groupConfig(c)
	})
	createSCRAMUsers(t, b.Addr, map[string]string{"alice": "a-pw"})
	createTopic(t, b.Addr, "t-alice", 2, nil)
	createTopic(t, b.Addr, "t-other", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, b.Addr)
	for _, a := range []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("t-alice").Operations(kadm.OpAll),
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Groups("g-alice").Operations(kadm.OpRead),
	} {
		res, err := adm.CreateACLs(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("create acl: %v", r.Err)
			}
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms("alice", "a-pw")["SCRAM-SHA-256"]),
		kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	alice := cl.SeedBrokers()[0]
	// The coordinator is found first, which creates __consumer_offsets.
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorKey, find.CoordinatorKeys = "g-alice", []string{"g-alice"}
	resp, err := alice.Request(ctx, find)
	if err != nil {
		t.Fatalf("find coordinator: %v", err)
	}
	if fr := resp.(*kmsg.FindCoordinatorResponse); fr.ErrorCode != 0 || len(fr.Coordinators) != 1 || fr.Coordinators[0].ErrorCode != 0 {
		t.Fatalf("find coordinator: %+v", fr)
	}
	heartbeat := func(t *testing.T, group, topic string) int16 {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.RebalanceTimeoutMillis = group, uuid.NewString(), 10000
		req.SubscribedTopicNames, req.Topics = []string{topic}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		resp, err := alice.Request(ctx, req)
		if err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
		return resp.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode
	}
	describe := func(t *testing.T, group string) int16 {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{group}
		resp, err := alice.Request(ctx, req)
		if err != nil {
			t.Fatalf("describe: %v", err)
		}
		return resp.(*kmsg.ConsumerGroupDescribeResponse).Groups[0].ErrorCode
	}
	for _, tc := range []struct {
		name string
		code func(t *testing.T) int16
		want int16
	}{
		{"heartbeat without group READ", func(t *testing.T) int16 { return heartbeat(t, "g-other", "t-alice") }, kerr.GroupAuthorizationFailed.Code},
		{"heartbeat subscribing to a topic without DESCRIBE", func(t *testing.T) int16 { return heartbeat(t, "g-alice", "t-other") }, kerr.TopicAuthorizationFailed.Code},
		{"heartbeat allowed", func(t *testing.T) int16 {
			// The coordinator may still be loading its new partition.
			var code int16
			eventually(t, 10*time.Second, "coordinator loaded", func() error {
				if code = heartbeat(t, "g-alice", "t-alice"); code == kerr.CoordinatorLoadInProgress.Code {
					return kerr.CoordinatorLoadInProgress
				}
				return nil
			})
			return code
		}, 0},
		{"describe without group DESCRIBE", func(t *testing.T) int16 { return describe(t, "g-other") }, kerr.GroupAuthorizationFailed.Code},
		{"describe allowed (READ implies DESCRIBE)", func(t *testing.T) int16 { return describe(t, "g-alice") }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.code(t); got != tc.want {
				t.Fatalf("error code %d (%v), want %d", got, kerr.ErrorForCode(got), tc.want)
			}
		})
	}
}
