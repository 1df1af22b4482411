package api

import (
	"context"
	"errors"
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

// checkProduced runs the topic's record checks on a produced record set,
// decoding it once, in the pass that validates it for the append (p's
// Check, outside the partition's lock): the placement check when the topic
// asks for one (gregor.partitioner.enforce=true: every keyed record must be
// in the partition the topic's partitioner chooses), then the topic's
// produce interceptor (gregor.interceptor.produce). It returns the record
// set to append (records, or the interceptor's rewrite) with the result of
// that validation when it ran and still applies (else the zero Checked:
// the append path checks the record set), or the Kafka error code and the
// error; an interceptor's rejection is an *extension.RejectedError.
func (b *Broker) checkProduced(ctx context.Context, im *controller.Image, p *partition.Partition, topic string, part int32, records []byte, principal sdkauth.Principal) ([]byte, partition.Checked, int16, error) {
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
		return nil, partition.Checked{}, errCode(err), err
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
