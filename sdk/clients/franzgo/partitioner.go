// Package franzgo adapts a Gregor partitioner (a WebAssembly module loaded
// by the broker's host, or any partitioner.BatchPartitioner) to franz-go's
// kgo.Partitioner.
package franzgo

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// Partitioner places franz-go records with a Gregor partitioner. Use it
// with kgo.RecordPartitioner(franzgo.NewPartitioner(p)).
type Partitioner struct {
	p        partitioner.BatchPartitioner
	fallback partitioner.Murmur2Batch
	// OnError, when set, receives every module failure; the record is then
	// placed by Kafka's default rule.
	OnError func(error)
}

var _ kgo.Partitioner = (*Partitioner)(nil)

// NewPartitioner returns a Partitioner over p, which must be safe for
// concurrent use (a *hooks.Partitioner is). The caller keeps ownership of
// p.
func NewPartitioner(p partitioner.BatchPartitioner) *Partitioner { return &Partitioner{p: p} }

// ForTopic implements kgo.Partitioner.
func (p *Partitioner) ForTopic(string) kgo.TopicPartitioner { return topicPartitioner{p} }

type topicPartitioner struct{ p *Partitioner }

// RequiresConsistency is true: a record's partition is the module's choice
// even while that partition has no leader, so the client and the broker's
// placement check always agree.
func (topicPartitioner) RequiresConsistency(*kgo.Record) bool { return true }

// Partition implements kgo.TopicPartitioner.
func (t topicPartitioner) Partition(r *kgo.Record, n int) int {
	if n <= 0 {
		return 0
	}
	rec := partitioner.Record{Key: r.Key, Value: r.Value}
	if len(r.Headers) > 0 {
		rec.Headers = make([]partitioner.Header, len(r.Headers))
		for i, h := range r.Headers {
			rec.Headers[i] = partitioner.Header{Key: h.Key, Value: h.Value}
		}
	}
	recs := [1]partitioner.Record{rec}
	var out [1]int32
	if err := t.p.p.PartitionBatch(recs[:], int32(n), out[:]); err != nil {
		if t.p.OnError != nil {
			t.p.OnError(err)
		}
		_ = t.p.fallback.PartitionBatch(recs[:], int32(n), out[:])
	}
	return int(out[0])
}
