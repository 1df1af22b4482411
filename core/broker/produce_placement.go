package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/partition"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// producedChecks are the buffers of the record checks of one produced
// record set: it is decoded once, for both the placement check and the
// interceptor.
type producedChecks struct {
	produced  extension.Produced
	placement extension.Placement
}

// checkBuffers recycles the record checks' buffers between requests.
var checkBuffers = sync.Pool{New: func() any { return new(producedChecks) }}

// CheckProduced runs the topic's record checks on a produced record set,
// decoding it once, in the pass that validates it for the append (p's
// Check, outside the partition's lock): the placement check when the topic
// asks for one (gregor.partitioner.enforce=true: every keyed record must be
// in the partition the topic's partitioner chooses), then the topic's
// produce interceptor (gregor.interceptor.produce). It returns the record
// set to append (records, or the interceptor's rewrite) with the result of
// that validation when it ran and still applies (else the zero Checked:
// the append path checks the record set), or the Kafka error code and the
// error; an interceptor's rejection is an *extension.RejectedError. A
// record set that fails validation comes back with code 0 and the error:
// the caller answers with the code its append path gives that error. Kafka
// Produce and produce over HTTP both call it.
func (b *Broker) CheckProduced(ctx context.Context, im *controller.Image, p *partition.Partition, topic string, part int32, records []byte, principal sdkauth.Principal) ([]byte, partition.Checked, int16, error) {
	if b.Extensions == nil {
		return records, partition.Checked{}, 0, nil
	}
	// The explicit overrides only: the gregor.* configs have no broker-level
	// value, and the image's map is never written, so no copy is needed.
	configs := im.Configs[controller.ConfigResource{Type: controller.ResourceTopic, Name: topic}]
	enforced := extension.Enforced(configs)
	ic, err := b.Extensions.TopicInterceptor(configs)
	if err != nil {
		return nil, partition.Checked{}, kerr.InvalidConfig.Code, err
	}
	if !enforced && ic == nil {
		return records, partition.Checked{}, 0, nil
	}
	c := checkBuffers.Get().(*producedChecks)
	defer checkBuffers.Put(c)
	c.produced.Reset()
	checked, err := p.Check(records, &c.produced, int(b.Config.Limits.MaxRequestBytes))
	if err != nil {
		return nil, partition.Checked{}, 0, err
	}
	if enforced {
		if code, err := b.placeDecoded(im, configs, topic, part, &c.produced, &c.placement); code != 0 {
			return nil, partition.Checked{}, code, err
		}
	}
	if ic == nil {
		return records, checked, 0, nil
	}
	out, code, err := interceptDecoded(ctx, ic, &c.produced, records, topic, part, principal)
	if code != 0 {
		return nil, partition.Checked{}, code, err
	}
	if len(out) != len(records) || &out[0] != &records[0] {
		return out, partition.Checked{}, 0, nil // rewritten: other bytes to check
	}
	return out, checked, 0, nil
}

// placeDecoded is the placement check on a decoded record set.
func (b *Broker) placeDecoded(im *controller.Image, configs map[string]string, topic string, partition int32, set *extension.Produced, c *extension.Placement) (int16, error) {
	t, ok := im.Topic(topic)
	if !ok {
		return kerr.UnknownTopicOrPartition.Code, nil
	}
	p, err := b.Extensions.TopicPartitioner(configs)
	if err != nil {
		return kerr.InvalidConfig.Code, err
	}
	err = c.CheckDecoded(p, set, partition, int32(len(t.Partitions)))
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, extension.ErrMisplaced):
		return kerr.InvalidRecord.Code, err
	}
	// The partitioner failed with no fallback.
	return kerr.UnknownServerError.Code, err
}

// interceptDecoded runs the topic's produce interceptor on a decoded record
// set. A rejection answers INVALID_RECORD, as Kafka answers a batch with
// invalid records. A failed interceptor under on_error = reject answers
// UNKNOWN_SERVER_ERROR with the message, as a failed placement check does:
// Kafka has no code for a failed broker-side check, and a retriable code
// would make clients resend into the same failure.
func interceptDecoded(ctx context.Context, ic *extension.Interceptor, set *extension.Produced, records []byte, topic string, partition int32, principal sdkauth.Principal) ([]byte, int16, error) {
	out, err := extension.InterceptProduced(ctx, ic, set, records, topic, partition, principal)
	var rej *extension.RejectedError
	switch {
	case err == nil:
		return out, 0, nil
	case errors.As(err, &rej):
		return nil, kerr.InvalidRecord.Code, err
	}
	return nil, kerr.UnknownServerError.Code, err
}

// TopicPartitioner is the partitioner topic picks under im (the built-in
// murmur2 without extensions): produce over HTTP places records with it.
func (b *Broker) TopicPartitioner(im *controller.Image, topic string) (*extension.Partitioner, error) {
	if b.Extensions == nil {
		return extension.Murmur2(), nil
	}
	return b.Extensions.TopicPartitioner(im.Configs[controller.ConfigResource{Type: controller.ResourceTopic, Name: topic}])
}

// Admit returns the leader epoch a produce to p is admitted in, or
// partition.ErrNotLeader when this broker does not lead p; the append
// checks the epoch again under the partition's lock.
func (b *Broker) Admit(p *partition.Partition) (int32, error) {
	if leader, _ := p.Leadership(); leader != b.Config.NodeID {
		return 0, fmt.Errorf("broker: %s-%d: %w (led by broker %d)", p.Topic, p.Index, partition.ErrNotLeader, leader)
	}
	return p.Admit()
}

// Leads reports whether this broker leads p.
func (b *Broker) Leads(p *partition.Partition) bool {
	leader, _ := p.Leadership()
	return leader == b.Config.NodeID
}
