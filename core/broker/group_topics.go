package broker

import (
	"sync"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
)

// topicsCache holds the topic list consumer groups assign from, rebuilt
// when the metadata image changes. Images are immutable, so the image
// pointer identifies the list.
type topicsCache struct {
	mu     sync.Mutex // guards im, topics
	im     *controller.Image
	topics map[string]group.TopicInfo
}

// GroupTopics lists the topics that exist, for the group coordinator and
// the group APIs. The map is shared: callers must not change it.
func (b *Broker) GroupTopics() map[string]group.TopicInfo {
	im := b.Controller.Image()
	c := &b.groupTopics
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.im != im {
		m := make(map[string]group.TopicInfo, len(im.Topics))
		for name, t := range im.Topics {
			m[name] = group.TopicInfo{ID: t.ID, Partitions: int32(len(t.Partitions))}
		}
		c.topics, c.im = m, im
	}
	return c.topics
}
