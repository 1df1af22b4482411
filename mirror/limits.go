package mirror

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaMaxMessageBytes is Kafka's default message.max.bytes, assumed when
// the target does not say.
const kafkaMaxMessageBytes = 1048588

// errLimitsChanged ends a session whose target producer batches for a
// topic at a limit the target no longer has: the producer caches each
// topic's batch limit, so a new session (which resumes every partition from
// the target) picks up the new one.
var errLimitsChanged = errors.New("mirror: a target topic's max.message.bytes changed")

// targetLimits is what the target accepts in one record batch: each target
// topic's max.message.bytes (from DescribeConfigs, re-read on every
// refresh) and, for topics whose config is not known, the broker's
// message.max.bytes. The target producer batches by it.
type targetLimits struct {
	// mu guards everything below; producer goroutines read through batchMax.
	mu     sync.Mutex
	broker int32
	topics map[string]int32
	// used is what batchMax answered per topic: the producer caches it
	// for the session.
	used map[string]int32
}

func newTargetLimits() *targetLimits {
	return &targetLimits{broker: kafkaMaxMessageBytes, topics: map[string]int32{}, used: map[string]int32{}}
}

// clampLimit keeps a limit within what the producer accepts.
func clampLimit(v int32) int32 { return min(max(v, 512), 1<<30) }

// batchMax is the producer's batch limit for a topic (ProducerBatchMaxBytesFn).
func (l *targetLimits) batchMax(topic string) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.topics[topic]
	if !ok {
		v = l.broker
	}
	v = clampLimit(v)
	l.used[topic] = v
	return v
}

// set records a topic's limit and reports whether the producer already
// batches that topic at another one.
func (l *targetLimits) set(topic string, v int32) (changed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.topics[topic] = v
	used, ok := l.used[topic]
	return ok && used != clampLimit(v)
}

// loadBrokerLimit reads the target broker's message.max.bytes.
func (s *session) loadBrokerLimit(ctx context.Context) {
	brokers, err := s.dstAdm.BrokerMetadata(ctx)
	if err != nil || len(brokers.Brokers) == 0 {
		s.m.log.Warn("target brokers unknown; assuming message.max.bytes", "value", kafkaMaxMessageBytes, "err", err)
		return
	}
	rcs, err := s.dstAdm.DescribeBrokerConfigs(ctx, brokers.Brokers[0].NodeID)
	if err != nil {
		s.m.log.Warn("describe target broker configs; assuming message.max.bytes", "value", kafkaMaxMessageBytes, "err", err)
		return
	}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key != "message.max.bytes" || c.Value == nil {
				continue
			}
			if v, err := strconv.ParseInt(*c.Value, 10, 32); err == nil && v > 0 {
				s.limits.mu.Lock()
				s.limits.broker = int32(v)
				s.limits.mu.Unlock()
			}
		}
	}
}

// loadTopicLimits reads the max.message.bytes of target topics. A topic
// whose limit changed under the running producer ends the session
// (errLimitsChanged).
func (s *session) loadTopicLimits(ctx context.Context, targets []string) error {
	if len(targets) == 0 {
		return nil
	}
	rcs, err := s.dstAdm.DescribeTopicConfigs(ctx, targets...)
	if err != nil {
		s.m.log.Warn("describe target topic configs; batching by message.max.bytes", "err", err)
		return nil
	}
	var changed []string
	for _, rc := range rcs {
		if rc.Err != nil {
			continue
		}
		for _, c := range rc.Configs {
			if c.Key != "max.message.bytes" || c.Value == nil {
				continue
			}
			v, err := strconv.ParseInt(*c.Value, 10, 32)
			if err != nil || v <= 0 {
				continue
			}
			if s.limits.set(rc.Name, int32(v)) {
				changed = append(changed, rc.Name)
			}
		}
	}
	if len(changed) > 0 {
		s.m.log.Info("target max.message.bytes changed; restarting the session to batch by it", "topics", changed)
		return errLimitsChanged
	}
	return nil
}

// varintLen is the length of v as a zigzag varint.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

func bytesLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

// batchOverhead is a v2 record batch with no records, with the array
// length the producer counts in front of it.
const batchOverhead = 4 + 61

// singleRecordBatchSize is the size of a record batch holding only r, as
// the target producer counts it (never less than the broker does): a
// record whose batch alone is over the target's limit can never be written.
func singleRecordBatchSize(r *kgo.Record) int {
	body := 1 + varintLen(0) + varintLen(0) + bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		body += varintLen(int64(len(h.Key))) + len(h.Key) + bytesLen(h.Value)
	}
	return batchOverhead + varintLen(int64(body)) + body
}

// errRecordTooLarge is wrapped by the error of a record that is larger than
// the target accepts.
var errRecordTooLarge = errors.New("record larger than the target accepts")

// tooLarge returns the error for a source record over the limit of its
// target topic, or nil when it fits.
func (s *session) tooLarge(st *partitionState, r *kgo.Record) error {
	size, limit := singleRecordBatchSize(r), s.limits.batchMax(st.target)
	if size <= int(limit) {
		return nil
	}
	return fmt.Errorf("mirror: source %s[%d] offset %d: %w: a batch of it alone is %d bytes, target %s has max.message.bytes %d (%w)",
		st.topic, st.partition, r.Offset, errRecordTooLarge, size, st.target, limit, kerr.MessageTooLarge)
}

// persistent reports whether a write error will recur however often the
// same write is retried: the partition then goes to the failing state
// instead of restarting the session. Retriable errors are transient.
func persistent(err error) bool {
	var ke *kerr.Error
	if errors.Is(err, errRecordTooLarge) {
		return true
	}
	if !errors.As(err, &ke) {
		return false
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.UnknownTopicID:
		// Retried by the client until its retry timeout: by then the
		// topic is missing, not late.
		return true
	}
	return !ke.Retriable
}
