package mirror

import (
	"regexp"
	"strings"
)

// HeartbeatsTopic is where every mirror writes its heartbeats on the target,
// as MirrorMaker 2 does. It is mirrored onward like any topic, always with the
// prefix, so that a cluster's heartbeat topics show which clusters reach it.
const HeartbeatsTopic = "heartbeats"

// OffsetSyncsTopic is the target topic holding the mirror's offset syncs for
// the source named source: the mirror's position and the facts that
// translate source offsets into target offsets.
func OffsetSyncsTopic(source string) string { return source + ".offset-syncs.internal" }

// CheckpointsTopic is the target topic holding translated group offsets, by
// MirrorMaker 2's name and record format.
func CheckpointsTopic(source string) string { return source + ".checkpoints.internal" }

// LinkStateTopic is the target topic recording promoted topics: a promoted
// topic is no longer mirrored from source and belongs to the target.
func LinkStateTopic(source string) string { return source + ".link-state.internal" }

// policy decides which source topics and groups are mirrored and what the
// target topics are called.
type policy struct {
	source, target string
	rename         string
	sep            string
	include        []*regexp.Regexp
	exclude        []*regexp.Regexp
	groupInclude   []*regexp.Regexp
	groupExclude   []*regexp.Regexp
}

func newPolicy(cfg Config) policy {
	return policy{
		source:       cfg.Source.Name,
		target:       cfg.Target.Name,
		rename:       cfg.Topics.Rename,
		sep:          cfg.Topics.Separator,
		include:      compileAll(cfg.Topics.Include),
		exclude:      compileAll(cfg.Topics.Exclude),
		groupInclude: compileAll(cfg.Groups.Include),
		groupExclude: compileAll(cfg.Groups.Exclude),
	}
}

// compileAll compiles anchored expressions that Validate has checked.
func compileAll(exprs []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(exprs))
	for _, e := range exprs {
		out = append(out, regexp.MustCompile("^(?:"+e+")$"))
	}
	return out
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// isHeartbeats reports whether topic is a heartbeats topic, local or
// mirrored ("heartbeats", "east.heartbeats").
func (p policy) isHeartbeats(topic string) bool {
	return topic == HeartbeatsTopic || strings.HasSuffix(topic, "."+HeartbeatsTopic) ||
		(p.sep != "" && strings.HasSuffix(topic, p.sep+HeartbeatsTopic))
}

// isInternal reports topics that are never mirrored: Kafka's and Gregor's
// internal topics and every mirror's bookkeeping topics.
func isInternal(topic string) bool {
	return strings.HasPrefix(topic, "__") || strings.HasSuffix(topic, ".internal") ||
		strings.HasSuffix(topic, "-internal") || strings.HasSuffix(topic, ".replica")
}

// TargetTopic names the target copy of a source topic.
func (p policy) TargetTopic(topic string) string {
	if p.rename == RenameIdentity && !p.isHeartbeats(topic) {
		return topic
	}
	sep := p.sep
	if sep == "" {
		sep = "."
	}
	return p.source + sep + topic
}

// cameFromTarget reports whether a prefixed topic name shows that the topic
// was mirrored out of the target (directly or through other clusters).
func (p policy) cameFromTarget(topic string) bool {
	if p.sep == "" {
		return false
	}
	parts := strings.Split(topic, p.sep)
	for _, part := range parts[:len(parts)-1] {
		if part == p.target {
			return true
		}
	}
	return false
}

// Why a topic is not mirrored; "" when it is.
const (
	skipInternal = "internal topic"
	skipCycle    = "mirrored from the target (cycle)"
	skipFilter   = "not selected by topics.include/exclude"
)

// topicSkip says why a source topic is not mirrored, or "" when it is.
// fromTarget holds topics that the source's offset syncs show came from the
// target, which catches cycles under the identity policy.
func (p policy) topicSkip(topic string, fromTarget map[string]bool) string {
	switch {
	case isInternal(topic):
		return skipInternal
	case p.cameFromTarget(topic) || fromTarget[topic]:
		return skipCycle
	case p.isHeartbeats(topic):
		return "" // topology: always mirrored
	case !matchAny(p.include, topic) || matchAny(p.exclude, topic):
		return skipFilter
	}
	return ""
}

// groupSelected reports whether a group's offsets are checkpointed.
func (p policy) groupSelected(group string) bool {
	return matchAny(p.groupInclude, group) && !matchAny(p.groupExclude, group)
}
