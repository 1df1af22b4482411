package api

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
)

// mirrorLinkConfig names the topic config that makes a topic a read-only
// mirror of a link.
const mirrorLinkConfig = "gregor.mirror.link"

// produceLink returns the link a produce request appends for: its
// transactional id is config.MirrorLinkPrefix followed by the link name.
func produceLink(transactionalID *string) (link string, ok bool) {
	if transactionalID == nil || !strings.HasPrefix(*transactionalID, config.MirrorLinkPrefix) {
		return "", false
	}
	return strings.TrimPrefix(*transactionalID, config.MirrorLinkPrefix), true
}

// checkMirrorLink decides whether a produce may append to topic: a topic
// linked to a mirror takes appends from that link only, and a link appends
// only to its own topics.
func checkMirrorLink(im *controller.Image, topic, link string, isLink bool) (int16, error) {
	owner := im.Configs[controller.ConfigResource{Type: controller.ResourceTopic, Name: topic}][mirrorLinkConfig]
	switch {
	case !isLink && owner != "":
		return kerr.PolicyViolation.Code, fmt.Errorf("topic %s is a read-only mirror of %s; promote it to write", topic, owner)
	case isLink && owner == "":
		return kerr.PolicyViolation.Code, fmt.Errorf("topic %s is not a mirror (%s is empty); link %s may not write to it", topic, mirrorLinkConfig, link)
	case isLink && owner != link:
		return kerr.PolicyViolation.Code, fmt.Errorf("topic %s is a mirror of %s, not of link %s", topic, owner, link)
	}
	return 0, nil
}
