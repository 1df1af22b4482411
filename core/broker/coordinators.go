package broker

import (
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/txn"
)

// assignGroupPartitions tells the group coordinator which
// __consumer_offsets partitions this broker leads in im; it loads them.
func (b *Broker) assignGroupPartitions(im *controller.Image) {
	n, led := b.ledPartitions(im, group.OffsetsTopic)
	leaders := make(map[int32]group.Leader, len(led))
	for i, l := range led {
		leaders[i] = group.Leader{Partition: l.p, Epoch: l.epoch}
	}
	b.Groups.Assign(n, leaders)
}

// assignTxnPartitions tells the transaction coordinator which
// __transaction_state partitions this broker leads in im; it loads them.
func (b *Broker) assignTxnPartitions(im *controller.Image) {
	n, led := b.ledPartitions(im, txn.StateTopic)
	leaders := make(map[int32]txn.Leader, len(led))
	for i, l := range led {
		leaders[i] = txn.Leader{Partition: l.p, Epoch: l.epoch}
	}
	b.Txns.Assign(n, leaders)
}

// ledPartition is a partition this broker leads, at its leader epoch.
type ledPartition struct {
	p     *partition.Partition
	epoch int32
}

// ledPartitions lists the partitions of topic this broker leads in im and
// hosts; n is the topic's partition count, 0 when it does not exist.
func (b *Broker) ledPartitions(im *controller.Image, topic string) (n int32, led map[int32]ledPartition) {
	t, ok := im.Topic(topic)
	if !ok {
		return 0, nil
	}
	led = map[int32]ledPartition{}
	for _, pm := range t.Partitions {
		if pm.Leader != b.Config.NodeID {
			continue
		}
		if p, ok := b.Partitions.Get(t.Name, pm.Index); ok {
			led[pm.Index] = ledPartition{p: p, epoch: pm.LeaderEpoch}
		}
	}
	return int32(len(t.Partitions)), led
}
