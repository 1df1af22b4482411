package partition

import (
	"sync/atomic"

	"github.com/gregorbroker/gregor/core/record"
)

// traffic counts what went through a partition since it was opened here,
// for the per-topic throughput and ISR change metrics.
type traffic struct {
	bytesIn, recordsIn, bytesOut atomic.Int64
	isrShrinks, isrExpands       atomic.Int64
}

func (t *traffic) appended(records []byte, headers []record.Header) {
	n := int64(0)
	for _, h := range headers {
		n += int64(h.NumRecords)
	}
	t.add(int64(len(records)), n)
}

// add counts bytes and records appended.
func (t *traffic) add(bytes, records int64) {
	t.bytesIn.Add(bytes)
	t.recordsIn.Add(records)
}

// isrChanged counts a shrink when a replica left the ISR and an expand when
// one joined it (both, when one left and another joined).
func (t *traffic) isrChanged(old, next []int32) {
	in := func(s []int32, v int32) bool {
		for _, x := range s {
			if x == v {
				return true
			}
		}
		return false
	}
	for _, r := range old {
		if !in(next, r) {
			t.isrShrinks.Add(1)
			break
		}
	}
	for _, r := range next {
		if !in(old, r) {
			t.isrExpands.Add(1)
			break
		}
	}
}

// Traffic is what went through a partition since it was opened here.
type Traffic struct {
	BytesIn, RecordsIn, BytesOut int64
	ISRShrinks, ISRExpands       int64
}

// Traffic reads the partition's counters.
func (p *Partition) Traffic() Traffic {
	t := &p.traffic
	return Traffic{BytesIn: t.bytesIn.Load(), RecordsIn: t.recordsIn.Load(), BytesOut: t.bytesOut.Load(),
		ISRShrinks: t.isrShrinks.Load(), ISRExpands: t.isrExpands.Load()}
}

// Replication is a partition's replica set and ISR as last given by the
// metadata.
type Replication struct {
	Leader   int32
	Replicas []int32
	ISR      []int32
}

// Replication returns copies of the replica set and ISR.
func (p *Partition) Replication() Replication {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Replication{Leader: p.leader, Replicas: append([]int32{}, p.replicas...), ISR: append([]int32{}, p.isr...)}
}
