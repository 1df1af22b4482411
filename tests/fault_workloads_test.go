package tests

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// faultWorkloads are the consumer-group and exactly-once workloads that run
// beside the plain writers and readers of a fault schedule.
type faultWorkloads struct {
	groups *groupWorkload
	eos    *eosWorkload

	stopGroups, stopInput, stopEOS context.CancelFunc
	gwg, iwg, ewg                  sync.WaitGroup

	// The internal partitions the workloads use, which must be whole
	// before the next fault.
	offsetParts, txnParts []int32
}

const eosPartitions = 3

// startWorkloads creates the exactly-once topics and starts the members of
// both workloads and the exactly-once input producer; it waits (bounded)
// for the first acknowledged commit of each, so that faults find them
// running.
func startWorkloads(t *testing.T, ctx context.Context, c *childCluster, adm *kadm.Client, topic string) *faultWorkloads {
	t.Helper()
	two := "2"
	for _, tp := range []string{eosIn, eosOut} {
		createReplicated(t, ctx, adm, tp, eosPartitions, map[string]*string{"min.insync.replicas": &two})
	}
	c.waitMetadata("the exactly-once topics with a full ISR", 30*time.Second, func(md kadm.Metadata) bool {
		return fullISR(md, eosIn, eosPartitions) && fullISR(md, eosOut, eosPartitions)
	})
	w := &faultWorkloads{groups: newGroupWorkload(commitGroup, topic), eos: newEOSWorkload(eosIn, eosOut, eosGroup, eosMembers)}
	var gctx, ictx, ectx context.Context
	gctx, w.stopGroups = context.WithCancel(ctx)
	ictx, w.stopInput = context.WithCancel(ctx)
	ectx, w.stopEOS = context.WithCancel(ctx)
	for range commitMembers {
		cl := c.client(groupMemberOpts(commitGroup, topic)...)
		w.gwg.Add(1)
		go func() { defer w.gwg.Done(); w.groups.member(gctx, cl) }()
	}
	in := c.client(ackWriterOpts()...)
	w.iwg.Add(1)
	go func() { defer w.iwg.Done(); w.eos.produceInput(ictx, ctx, in) }()
	for i := range eosMembers {
		w.ewg.Add(1)
		go func() { defer w.ewg.Done(); w.eos.member(ectx, c.addrs(), i) }()
	}
	deadline := time.Now().Add(60 * time.Second)
	for w.groups.commits.count() == 0 || w.eos.committed() == 0 {
		if time.Now().After(deadline) {
			t.Logf("workloads: after 60s, %d offset commits and %d transactions acknowledged; faults start anyway", w.groups.commits.count(), w.eos.committed())
			break
		}
		time.Sleep(100 * time.Millisecond) // polling the workloads' progress
	}
	md := c.waitMetadata("the internal topics", 30*time.Second, func(md kadm.Metadata) bool {
		_, ok1 := md.Topics[offsetsTopic]
		_, ok2 := md.Topics[txnTopic]
		return ok1 && ok2
	})
	for _, g := range []string{commitGroup, eosGroup} {
		if p, _, err := internalPartition(md, offsetsTopic, g); err == nil {
			w.offsetParts = append(w.offsetParts, p)
		}
	}
	for i := range eosMembers {
		if p, _, err := internalPartition(md, txnTopic, w.eos.txnID(i)); err == nil {
			w.txnParts = append(w.txnParts, p)
		}
	}
	return w
}

// healed reports whether the workloads' topics and internal partitions are
// whole again.
func (w *faultWorkloads) healed(md kadm.Metadata) bool {
	return fullISR(md, eosIn, eosPartitions) && fullISR(md, eosOut, eosPartitions) &&
		internalISR(md, offsetsTopic, w.offsetParts) && internalISR(md, txnTopic, w.txnParts)
}

// acked is a one-line progress note for a fault's description.
func (w *faultWorkloads) acked() string {
	return fmt.Sprintf("offset commits %d, transactions %d", w.groups.commits.count(), w.eos.committed())
}

// finish stops the input, lets both groups consume to the end and commit
// it (bounded), stops the members, and checks what the exactly-once output
// holds; final is the drained plain topic, for the group checker.
func (w *faultWorkloads) finishGroups(t *testing.T, ctx context.Context, adm *kadm.Client, ends map[int32]int64) string {
	t.Helper()
	note := ""
	if !waitGroupCaughtUp(t, ctx, adm, w.groups, ends, 60*time.Second) {
		note = fmt.Sprintf("; group %s did not commit the end of the topic within 60s", commitGroup)
	}
	w.stopGroups()
	w.gwg.Wait()
	w.groups.check(ctx, adm, "at the end")
	return note
}

func (w *faultWorkloads) finishEOS(t *testing.T, ctx context.Context, adm *kadm.Client, seeds []string) eosReport {
	t.Helper()
	w.stopInput()
	w.iwg.Wait()
	stalled := waitCommittedTo(ctx, adm, seeds, eosGroup, eosIn, listEnds(t, ctx, adm, eosIn), 60*time.Second)
	w.stopEOS()
	w.ewg.Wait()
	return w.eos.check(t, ctx, adm, seeds, stalled)
}
