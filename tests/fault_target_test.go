package tests

import (
	"context"
	"fmt"
	"time"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/txn"
	"github.com/twmb/franz-go/pkg/kadm"
)

// The internal topics whose leaders the targeted faults kill.
const (
	offsetsTopic = "__consumer_offsets"
	txnTopic     = "__transaction_state"
)

// internalPartition is the partition of an internal topic holding a
// group's offsets or a transactional id's state, and its current leader,
// read from metadata (Kafka's hash: abs(javaHashCode(id)) % partitions,
// which core/group and core/txn compute and test against Java's).
func internalPartition(md kadm.Metadata, topic, id string) (partition, leader int32, err error) {
	td, ok := md.Topics[topic]
	if !ok || len(td.Partitions) == 0 {
		return -1, -1, fmt.Errorf("%s is not in metadata", topic)
	}
	n := int32(len(td.Partitions))
	if topic == offsetsTopic {
		partition = group.PartitionFor(id, n)
	} else {
		partition = txn.PartitionFor(id, n)
	}
	p, ok := td.Partitions[partition]
	if !ok || p.Leader < 0 {
		return partition, -1, fmt.Errorf("%s-%d has no leader in metadata", topic, partition)
	}
	return partition, p.Leader, nil
}

// internalISR reports whether the named partitions of an internal topic
// have a leader and every replica in the ISR.
func internalISR(md kadm.Metadata, topic string, partitions []int32) bool {
	td, ok := md.Topics[topic]
	if !ok {
		return false
	}
	for _, p := range partitions {
		pd, ok := td.Partitions[p]
		if !ok || pd.Err != nil || pd.Leader < 0 || len(pd.ISR) != len(pd.Replicas) {
			return false
		}
	}
	return true
}

// targetedKill is a targeted fault: it finds the leader of the internal
// partition holding id's state, waits for the next commit acknowledged to
// the client (acks), SIGKILLs that leader at once, and restarts it after
// down. It returns what it did.
func targetedKill(ctx context.Context, c *childCluster, adm *kadm.Client, md kadm.Metadata, topic, id string, acks *ackSignal, down time.Duration) (string, error) {
	p, leader, err := internalPartition(md, topic, id)
	if err != nil {
		return "", err
	}
	// Kafka's coordinator is that partition's leader; say so when a
	// FindCoordinator answer disagrees with metadata.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	var coord int32 = -1
	if topic == offsetsTopic {
		adm.FindGroupCoordinators(fctx, id).Each(func(r kadm.FindCoordinatorResponse) {
			if r.Err == nil {
				coord = r.NodeID
			}
		})
	} else {
		adm.FindTxnCoordinators(fctx, id).Each(func(r kadm.FindCoordinatorResponse) {
			if r.Err == nil {
				coord = r.NodeID
			}
		})
	}
	cancel()
	acked := acks.waitNext(20 * time.Second)
	c.kill(leader)
	what := fmt.Sprintf("leader %d of %s-%d (%s; coordinator %d)", leader, topic, p, id, coord)
	if !acked {
		what += ", no commit acknowledged within 20s before the kill"
	} else {
		what += ", right after a commit was acknowledged"
	}
	time.Sleep(down) // the node stays down this long
	c.restart(leader)
	return what, nil
}
