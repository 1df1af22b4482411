package api

import (
	"errors"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/extension"
)

// placements recycles the placement checker's buffers between requests.
var placements = sync.Pool{New: func() any { return new(extension.Placement) }}

// checkPlacement runs the topic's placement check when the topic asks for
// one (gregor.partitioner.enforce=true): every keyed record must be in the
// partition the topic's partitioner chooses. It returns the Kafka error
// code and the error, or 0 and nil.
func (b *Broker) checkPlacement(im *controller.Image, topic string, partition int32, records []byte) (int16, error) {
	if b.Extensions == nil {
		return 0, nil
	}
	// The explicit overrides only: the gregor.* configs have no broker-level
	// value, and the image's map is never written, so no copy is needed.
	configs := im.Configs[controller.ConfigResource{Type: controller.ResourceTopic, Name: topic}]
	if !extension.Enforced(configs) {
		return 0, nil
	}
	t, ok := im.Topic(topic)
	if !ok {
		return kerr.UnknownTopicOrPartition.Code, nil
	}
	p, err := b.Extensions.TopicPartitioner(configs)
	if err != nil {
		return kerr.InvalidConfig.Code, err
	}
	c := placements.Get().(*extension.Placement)
	defer placements.Put(c)
	c.MaxDecompressed = int(b.Config.Limits.MaxRequestBytes)
	err = c.Check(p, records, partition, int32(len(t.Partitions)))
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, extension.ErrMisplaced):
		return kerr.InvalidRecord.Code, err
	}
	// The partitioner failed with no fallback, or the batch is unreadable
	// (the append would reject it as corrupt too).
	return kerr.UnknownServerError.Code, err
}
