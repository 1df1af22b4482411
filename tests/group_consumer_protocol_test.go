package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The consumer group protocol (KIP-848) with franz-go's server-side
// balancing: the coordinator assigns the partitions.
func TestGroupConsumerProtocolFranz(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
		assignor string
	}{
		{"uniform", kgo.StickyBalancer(), "uniform"},
		{"range", kgo.RangeBalancer(), "range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startBroker(t, groupConfig)
			topic, group := "grp-848-"+tc.name, "g-848-"+tc.name
			createTopic(t, b.Addr, topic, 12, nil)
			produceToEach(t, b.Addr, topic, 12, 5)
			as := newAssignments()
			opts := []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(tc.balancer)}
			a := startKgoMember(t, b.Addr, group, topic, "a", as, opts...)
			bm := startKgoMember(t, b.Addr, group, topic, "b", as, opts...)
			c := startKgoMember(t, b.Addr, group, topic, "c", as, opts...)
			eventually(t, 30*time.Second, "three members share 12 partitions", func() error {
				return as.check([]string{"a", "b", "c"}, 12)
			})
			// Partitions that move before a commit are read again by their
			// new owner; every record is read at least once.
			eventually(t, 20*time.Second, "all 60 records read", func() error {
				seen := map[string]bool{}
				for _, m := range []*kgoMember{a, bm, c} {
					for _, v := range m.read() {
						seen[v] = true
					}
				}
				if len(seen) != 60 {
					return fmt.Errorf("%d distinct records read", len(seen))
				}
				return nil
			})
			// The members read their assignment before the last of them
			// acknowledges it in a heartbeat, so the group may still be
			// Reconciling for a moment: wait for Stable.
			eventually(t, 20*time.Second, "the group is Stable", func() error {
				d := describeConsumerGroup(t, b.Addr, group)
				if d.State != "Stable" || len(d.Members) != 3 || d.AssignorName != tc.assignor {
					return fmt.Errorf("ConsumerGroupDescribe = state %s, %d members, assignor %s", d.State, len(d.Members), d.AssignorName)
				}
				return nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := a.cl.CommitUncommittedOffsets(ctx); err != nil {
				t.Fatalf("commit from a consumer group member: %v", err)
			}
			res := mustCLI(t, 0, "", "group", "describe", group, "--bootstrap="+b.Addr)
			wantContains(t, "describe of a consumer group", res.stdout, "consumer/"+tc.assignor, "MEMBERS   3", topic)
			c.close()
			as.drop("c")
			eventually(t, 10*time.Second, "two members share 12 partitions after a leave", func() error {
				return as.check([]string{"a", "b"}, 12)
			})
		})
	}
}

func describeConsumerGroup(t *testing.T, addr, group string) kmsg.ConsumerGroupDescribeResponseGroup {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) != 1 {
		t.Fatalf("ConsumerGroupDescribe: %v", err)
	}
	return resp.Groups[0]
}
