package api

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/protocol"
)

// fetchInterceptor is the fetch interceptor topic configures
// (gregor.interceptor.fetch), nil for none; a consumer's records from such
// a topic are read into the response (never spliced) and passed through
// it. A name broker.toml does not declare comes back as an error: the
// partition then answers an error rather than unmasked records. Follower
// fetches never come here (handleReplicaFetch).
func (b *Broker) fetchInterceptor(topic string) (*extension.Interceptor, error) {
	configs := b.Controller.Image().Configs[controller.ConfigResource{Type: controller.ResourceTopic, Name: topic}]
	v, ok := configs[extension.ConfigInterceptFetch]
	switch {
	case !ok:
		return nil, nil
	case b.Extensions == nil && v != "" && v != config.NoInterceptor:
		return nil, fmt.Errorf("%s = %q, and the broker has no extensions", extension.ConfigInterceptFetch, v)
	case b.Extensions == nil:
		return nil, nil
	}
	return b.Extensions.TopicFetchInterceptor(configs)
}

// fetchInterceptorMissing answers a partition of a topic whose
// gregor.interceptor.fetch names no declared interceptor (broker.toml
// dropped it): its records are withheld rather than sent unmasked, with
// UNKNOWN_SERVER_ERROR (which consumers retry, where INVALID_CONFIG would
// end a Java consumer with an IllegalStateException), and a warning at
// most once a second.
func (b *Broker) fetchInterceptorMissing(topic string, partition int32, err error) int16 {
	now := time.Now().UnixNano()
	if last := missingWarned.Load(); now-last > int64(time.Second) && missingWarned.CompareAndSwap(last, now) {
		b.Logger.Warn("fetch interceptor: records withheld", "topic", topic, "partition", partition, "err", err)
	}
	return kerr.UnknownServerError.Code
}

// missingWarned is when fetchInterceptorMissing last warned (unix nanos).
var missingWarned atomic.Int64

// interceptFetched passes a consumer's records of one partition through
// ic with the connection's principal. A failure (the interceptor failed
// under on_error = reject, or the stored batches do not decode) is
// UNKNOWN_SERVER_ERROR for the partition: the records cannot be given out
// as the topic requires, and Kafka consumers (Java, franz-go, librdkafka)
// log that code and fetch the partition again rather than give up on it,
// which fits a module that times out or traps now and then; nothing of
// the partition's records is returned with it.
func (b *Broker) interceptFetched(r *protocol.Request, ic *extension.Interceptor, topic string, partition int32, records []byte) ([]byte, int16) {
	if len(records) == 0 {
		return records, 0
	}
	out, err := extension.InterceptFetched(context.Background(), ic, records, topic, partition, principalOf(r), int(b.Config.Limits.MaxRequestBytes))
	if err != nil { // logged, throttled, by the extension
		return nil, kerr.UnknownServerError.Code
	}
	return out, 0
}

// interceptShareFetched passes a share consumer's acquired records of
// topic through the topic's fetch interceptor, as for Fetch; records it
// drops leave gaps in the acquired ranges, as compaction's do. It returns
// the partition's error code (0: *records is what to send).
func (b *Broker) interceptShareFetched(r *protocol.Request, topic string, partition int32, records *[]byte) int16 {
	ic, err := b.fetchInterceptor(topic)
	if err != nil {
		return b.fetchInterceptorMissing(topic, partition, err)
	}
	if ic == nil {
		return 0
	}
	out, code := b.interceptFetched(r, ic, topic, partition, *records)
	if code == 0 {
		*records = out
	}
	return code
}
