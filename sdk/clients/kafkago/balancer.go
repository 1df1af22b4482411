// Package kafkago adapts a Gregor partitioner (a WebAssembly module loaded
// by the broker's host, or any partitioner.BatchPartitioner) to
// segmentio/kafka-go's kafka.Balancer.
package kafkago

import (
	"github.com/segmentio/kafka-go"

	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// Balancer places kafka-go messages with a Gregor partitioner. It is safe
// for concurrent use (kafka-go calls Balance from the Writer's goroutines)
// when the partitioner is. Each message is one call into the partitioner.
type Balancer struct {
	p        partitioner.BatchPartitioner
	fallback partitioner.Murmur2Batch
	// OnError, when set, receives every module failure; the message is
	// then placed by Kafka's default rule.
	OnError func(error)
}

var _ kafka.Balancer = (*Balancer)(nil)

// NewBalancer returns a Balancer over p, which must be safe for concurrent
// use (a *hooks.Partitioner is). The caller keeps ownership of p.
func NewBalancer(p partitioner.BatchPartitioner) *Balancer { return &Balancer{p: p} }

// Balance implements kafka.Balancer: the module chooses an index in
// [0, len(partitions)) and Balance returns that partition, as kafka-go's
// own hash balancers do.
func (b *Balancer) Balance(msg kafka.Message, partitions ...int) int {
	if len(partitions) == 0 {
		return 0
	}
	rec := partitioner.Record{Key: msg.Key, Value: msg.Value}
	if len(msg.Headers) > 0 {
		rec.Headers = make([]partitioner.Header, len(msg.Headers))
		for i, h := range msg.Headers {
			rec.Headers[i] = partitioner.Header{Key: h.Key, Value: h.Value}
		}
	}
	recs := [1]partitioner.Record{rec}
	var out [1]int32
	n := int32(len(partitions))
	if err := b.p.PartitionBatch(recs[:], n, out[:]); err != nil {
		if b.OnError != nil {
			b.OnError(err)
		}
		_ = b.fallback.PartitionBatch(recs[:], n, out[:])
	}
	return partitions[out[0]]
}
