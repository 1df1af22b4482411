package main

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// explainedError is a Kafka error restated for a person; it still unwraps
// to the original so callers can test it with errors.Is.
type explainedError struct {
	msg string
	err error
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.err }

func explain(err error, format string, args ...any) error {
	return &explainedError{msg: fmt.Sprintf(format, args...), err: err}
}

// topicError turns a Kafka error about one topic into a sentence a person
// can act on. msg is the broker's optional error message.
func topicError(topic string, err error, msg string) error {
	if err == nil {
		return nil
	}
	detail := msg
	if detail == "" {
		var ke *kerr.Error
		if errors.As(err, &ke) {
			detail = ke.Description
		} else {
			detail = err.Error()
		}
	}
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return explain(err, "topic %q does not exist; create it with `gregor topic create %s`", topic, topic)
	case errors.Is(err, kerr.TopicAlreadyExists):
		return explain(err, "topic %q already exists", topic)
	case errors.Is(err, kerr.InvalidTopicException):
		return explain(err, "invalid topic name %q: %s", topic, detail)
	case errors.Is(err, kerr.InvalidPartitions):
		return explain(err, "topic %q: invalid partition count: %s", topic, detail)
	case errors.Is(err, kerr.InvalidReplicationFactor):
		return explain(err, "topic %q: invalid replication factor: %s", topic, detail)
	case errors.Is(err, kerr.InvalidReplicaAssignment):
		return explain(err, "topic %q: invalid replica assignment: %s", topic, detail)
	case errors.Is(err, kerr.InvalidConfig):
		return explain(err, "topic %q: invalid config: %s", topic, detail)
	case errors.Is(err, kerr.PolicyViolation):
		return explain(err, "topic %q: rejected by the broker's policy: %s", topic, detail)
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return explain(err, "topic %q: not authorized", topic)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return explain(err, "topic %q: not authorized on the cluster", topic)
	case errors.Is(err, kerr.UnsupportedVersion):
		return explain(err, "topic %q: the broker does not support this request version", topic)
	}
	if msg != "" {
		return fmt.Errorf("topic %q: %s: %w", topic, msg, err)
	}
	return fmt.Errorf("topic %q: %w", topic, err)
}

// isUnknownTopic reports whether err says a topic does not exist.
func isUnknownTopic(err error) bool {
	return errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID)
}
