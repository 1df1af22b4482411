package broker

import (
	"github.com/google/uuid"

	"github.com/gregorbroker/gregor/core/controller"
)

// TopicNameByID is the name of the topic with id in im, or "" when no
// topic has it (requests that name topics by id answer UNKNOWN_TOPIC_ID).
func TopicNameByID(im *controller.Image, id [16]byte) string {
	if t, ok := im.TopicsByID[uuid.UUID(id)]; ok {
		return t.Name
	}
	return ""
}
