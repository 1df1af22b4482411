package broker

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
)

// MirrorLinkConfig names the topic config that makes a topic a read-only
// mirror of a link.
const MirrorLinkConfig = "gregor.mirror.link"

// ProduceLink returns the link a produce request appends for: its
// transactional id is config.MirrorLinkPrefix followed by the link name.
func ProduceLink(transactionalID *string) (link string, ok bool) {
	if transactionalID == nil || !strings.HasPrefix(*transactionalID, config.MirrorLinkPrefix) {
		return "", false
	}
	return strings.TrimPrefix(*transactionalID, config.MirrorLinkPrefix), true
}

// CheckMirrorLink decides whether a produce may append to topic: a topic
// linked to a mirror takes appends from that link only, and a link appends
// only to its own topics (isLink: the produce is link's, see ProduceLink).
// A refusal is POLICY_VIOLATION with the reason, for Kafka Produce and
// produce over HTTP alike.
func CheckMirrorLink(im *controller.Image, topic, link string, isLink bool) (int16, error) {
	owner := im.Configs[controller.ConfigResource{Type: controller.ResourceTopic, Name: topic}][MirrorLinkConfig]
	switch {
	case !isLink && owner != "":
		return kerr.PolicyViolation.Code, fmt.Errorf("topic %s is a read-only mirror of %s; promote it to write", topic, owner)
	case isLink && owner == "":
		return kerr.PolicyViolation.Code, fmt.Errorf("topic %s is not a mirror (%s is empty); link %s may not write to it", topic, MirrorLinkConfig, link)
	case isLink && owner != link:
		return kerr.PolicyViolation.Code, fmt.Errorf("topic %s is a mirror of %s, not of link %s", topic, owner, link)
	}
	return 0, nil
}
