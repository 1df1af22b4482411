package coordinator

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gregorbroker/gregor/core/share"
)

// A share coordinator key names one share-partition as Kafka's
// FindCoordinator key type SHARE (2) does: "groupId:topicId:partition",
// the topic id in Kafka's form (URL-safe base64 without padding).

// ErrInvalidCoordinatorKey is a share coordinator key that is not
// "groupId:topicId:partition" (INVALID_REQUEST).
var ErrInvalidCoordinatorKey = errors.New("coordinator: invalid share coordinator key")

// CoordinatorKey is k as a FindCoordinator key.
func CoordinatorKey(k share.PartitionKey) string {
	return k.Group + ":" + base64.RawURLEncoding.EncodeToString(k.TopicID[:]) + ":" + strconv.Itoa(int(k.Partition))
}

// ParseCoordinatorKey reads a FindCoordinator share key with Kafka's
// checks: three fields separated by ':', a group id that is not blank
// (and is trimmed), a 16-byte topic id and a 32-bit partition number.
func ParseCoordinatorKey(key string) (share.PartitionKey, error) {
	var k share.PartitionKey
	// Java's String.split drops trailing empty fields.
	fields := strings.Split(key, ":")
	for len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	if len(fields) != 3 {
		return k, fmt.Errorf("%w: expected groupId:topicId:partition, found %q", ErrInvalidCoordinatorKey, key)
	}
	k.Group = strings.TrimSpace(fields[0])
	if k.Group == "" {
		return k, fmt.Errorf("%w: empty group id", ErrInvalidCoordinatorKey)
	}
	id, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(fields[1], "="))
	if err != nil || len(id) != len(k.TopicID) {
		return k, fmt.Errorf("%w: invalid topic id %q", ErrInvalidCoordinatorKey, fields[1])
	}
	copy(k.TopicID[:], id)
	p, err := strconv.ParseInt(fields[2], 10, 32)
	if err != nil {
		return k, fmt.Errorf("%w: invalid partition %q", ErrInvalidCoordinatorKey, fields[2])
	}
	k.Partition = int32(p)
	return k, nil
}

// StateLeader is the share coordinator of k: the broker leading the
// __share_group_state partition k hashes to. The topic is created on
// first use, as Kafka's FindCoordinator creates it.
func (c *Coordinator) StateLeader(k share.PartitionKey) (int32, error) { return c.stateLeader(k) }
