package partition

import "time"

// ExpireProducers forgets the producers with no open transaction whose
// last batch or marker is at least maxIdle older than the partition's clock
// (Kafka's producer.id.expiration.ms), so that the state of producers long
// gone does not grow without bound. A forgotten producer that writes again
// is treated as new: it may start at any sequence. It returns how many
// producers were forgotten.
func (p *Partition) ExpireProducers(maxIdle time.Duration) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0
	}
	n := p.producers.expire(p.now().UnixMilli(), maxIdle.Milliseconds())
	if n > 0 {
		p.snapDirty = true
	}
	return n
}

func (s *producerState) expire(nowMs, maxIdleMs int64) int {
	n := 0
	for id, e := range s.producers {
		if e.currentTxnFirstOffset >= 0 {
			continue
		}
		ts := e.lastTimestamp
		if last, ok := e.last(); ok {
			ts = max(ts, last.timestamp)
		}
		if nowMs-ts >= maxIdleMs {
			delete(s.producers, id)
			n++
		}
	}
	return n
}
