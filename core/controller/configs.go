package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gregorbroker/gregor/core/config"
)

// AlterConfig changes one resource's configs.
type AlterConfig struct {
	Resource ConfigResource
	// Replace gives the legacy AlterConfigs semantics: the resource's
	// explicit configs become exactly the Set ops (nil values are skipped).
	// Otherwise Ops apply incrementally (IncrementalAlterConfigs).
	Replace bool
	Ops     []ConfigOp
}

// ConfigOp is one config operation; Value is nil for Delete.
type ConfigOp struct {
	Name  string
	Value *string
	Op    OpType
}

// ConfigResult is the outcome for one resource.
type ConfigResult struct {
	Resource ConfigResource
	Err      error
}

// AlterConfigs validates each resource's changes and, unless validateOnly,
// applies them. Topic resources take topic configs; broker resources (a node
// id, or "" for the cluster-wide default) take the broker-level names of
// those configs (e.g. log.retention.ms). Results follow the order of reqs.
func (c *Controller) AlterConfigs(ctx context.Context, reqs []AlterConfig, validateOnly bool) []ConfigResult {
	results := make([]ConfigResult, len(reqs))
	for i, r := range reqs {
		results[i].Resource = r.Resource
	}
	if err := c.checkWritable(ctx); err != nil {
		for i := range results {
			results[i].Err = err
		}
		return results
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	im := c.Image()

	seen := make(map[ConfigResource]int, len(reqs))
	for _, r := range reqs {
		seen[r.Resource]++
	}
	var records []record
	var recordOf []int
	for i, r := range reqs {
		if seen[r.Resource] > 1 {
			results[i].Err = fmt.Errorf("controller: %s: %w: the request lists it more than once", describeResource(r.Resource), ErrInvalidRequest)
			continue
		}
		next, err := c.planConfigs(im, r)
		if err != nil {
			results[i].Err = err
			continue
		}
		if validateOnly || maps.Equal(next, im.Configs[r.Resource]) {
			continue
		}
		records = append(records, &configRecord{Resource: r.Resource, Configs: next})
		recordOf = append(recordOf, i)
	}
	var clearELR []record
	for j, err := range c.proposeAll(ctx, records) {
		results[recordOf[j]].Err = err
		if err == nil {
			clearELR = append(clearELR, c.planMinISRChange(im, records[j].(*configRecord))...)
		}
	}
	if err := firstErr(c.proposeAll(ctx, clearELR)); err != nil {
		c.log.Warn("clearing eligible leader replicas after a min.insync.replicas change", "err", err)
	}
	return results
}

// planMinISRChange plans clearing the ELR of the partitions whose
// min.insync.replicas r changes (a topic's, or the cluster-wide default for
// every topic), as Kafka does with ELR on. before is the image r was
// planned on; the records are planned on the current image.
func (c *Controller) planMinISRChange(before *Image, r *configRecord) []record {
	const key = "min.insync.replicas"
	if c.cfg.Broker.Replication.EligibleLeaderReplicasVersion < 1 {
		return nil
	}
	old, had := before.Configs[r.Resource][key]
	now, has := r.Configs[key]
	if had == has && old == now {
		return nil
	}
	switch {
	case r.Resource.Type == ResourceTopic:
		return planClearELR(c.Image(), r.Resource.Name)
	case r.Resource.Type == ResourceBroker && r.Resource.Name == "":
		return planClearELR(c.Image(), "")
	}
	return nil
}

func describeResource(r ConfigResource) string {
	switch r.Type {
	case ResourceTopic:
		return fmt.Sprintf("topic %q", r.Name)
	case ResourceBroker:
		if r.Name == "" {
			return "cluster-wide broker default"
		}
		return "broker " + r.Name
	case ResourceGroup:
		return fmt.Sprintf("group %q", r.Name)
	case ResourceClientMetrics:
		return fmt.Sprintf("client metrics subscription %q", r.Name)
	}
	return fmt.Sprintf("resource type %d %q", r.Type, r.Name)
}

// configDefs returns how a resource's config names are looked up, and the
// defaults that Append and Subtract start from.
func (c *Controller) configDefs(im *Image, res ConfigResource) (func(string) (config.TopicConfigDef, bool), func(config.TopicConfigDef) string, error) {
	switch res.Type {
	case ResourceTopic:
		if _, ok := im.Topics[res.Name]; !ok {
			return nil, nil, fmt.Errorf("controller: topic %q: %w", res.Name, ErrUnknownTopic)
		}
		return config.LookupTopicConfig, func(d config.TopicConfigDef) string { return d.BrokerDefault(&c.cfg.Broker) }, nil
	case ResourceBroker:
		if res.Name != "" {
			if id, err := strconv.ParseInt(res.Name, 10, 32); err != nil || id < 0 {
				return nil, nil, fmt.Errorf("controller: broker %q: %w: not a broker id", res.Name, ErrInvalidRequest)
			}
		}
		return lookupBrokerConfig, func(d config.TopicConfigDef) string { return d.BrokerDefault(&c.cfg.Broker) }, nil
	case ResourceGroup:
		if res.Name == "" {
			return nil, nil, fmt.Errorf("controller: %s: %w: a group config needs a group id", describeResource(res), ErrInvalidRequest)
		}
		lookup := func(name string) (config.TopicConfigDef, bool) { return config.LookupGroupConfig(&c.cfg.Broker, name) }
		return lookup, func(d config.TopicConfigDef) string { return d.BrokerDefault(&c.cfg.Broker) }, nil
	case ResourceClientMetrics:
		if res.Name == "" {
			return nil, nil, fmt.Errorf("controller: %s: %w: a subscription needs a name", describeResource(res), ErrInvalidRequest)
		}
		return lookupClientMetricsConfig, func(d config.TopicConfigDef) string { return d.BrokerDefault(&c.cfg.Broker) }, nil
	}
	return nil, nil, fmt.Errorf("controller: %s: %w: unsupported resource type", describeResource(res), ErrInvalidRequest)
}

// lookupBrokerConfig finds a broker-level config: a dynamic-only broker
// config (the replication throttle rates) or the broker-level name of a
// topic config.
func lookupBrokerConfig(name string) (config.TopicConfigDef, bool) {
	if d, ok := config.LookupDynamicBrokerConfig(name); ok {
		return d, true
	}
	return config.LookupBrokerSynonym(name)
}

// planConfigs computes a resource's explicit configs after r and validates
// them.
func (c *Controller) planConfigs(im *Image, r AlterConfig) (map[string]string, error) {
	what := describeResource(r.Resource)
	lookup, fallback, err := c.configDefs(im, r.Resource)
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(r.Ops))
	for _, op := range r.Ops {
		if names[op.Name] {
			return nil, fmt.Errorf("controller: %s: %w: config %q is given more than once", what, ErrInvalidRequest, op.Name)
		}
		names[op.Name] = true
	}

	var next map[string]string
	if r.Replace {
		next = make(map[string]string, len(r.Ops))
		for _, op := range r.Ops {
			if op.Op != OpSet {
				return nil, fmt.Errorf("controller: %s: %w: a replacing alter accepts only set operations", what, ErrInvalidRequest)
			}
			if op.Value != nil {
				next[op.Name] = *op.Value
			}
		}
	} else {
		next = maps.Clone(im.Configs[r.Resource])
		if next == nil {
			next = map[string]string{}
		}
		for _, op := range r.Ops {
			def, ok := lookup(op.Name)
			if !ok && op.Op != OpDelete {
				return nil, fmt.Errorf("controller: %s: %w: unknown config %q", what, ErrInvalidConfig, op.Name)
			}
			switch op.Op {
			case OpSet:
				if op.Value == nil {
					return nil, fmt.Errorf("controller: %s: %w: config %q: a set needs a value", what, ErrInvalidRequest, op.Name)
				}
				next[op.Name] = *op.Value
			case OpDelete:
				delete(next, op.Name)
			case OpAppend, OpSubtract:
				if def.Type != config.TypeList {
					return nil, fmt.Errorf("controller: %s: %w: config %q is not a list; append and subtract apply to lists only",
						what, ErrInvalidConfig, op.Name)
				}
				if op.Value == nil {
					return nil, fmt.Errorf("controller: %s: %w: config %q: %s needs a value", what, ErrInvalidRequest, op.Name, opName(op.Op))
				}
				base, ok := next[op.Name]
				if !ok {
					base = fallback(def)
				}
				next[op.Name] = editList(base, *op.Value, op.Op == OpAppend)
			default:
				return nil, fmt.Errorf("controller: %s: %w: config %q: unknown operation %d", what, ErrInvalidRequest, op.Name, op.Op)
			}
		}
	}

	if r.Resource.Type == ResourceTopic {
		if err := config.ValidateTopicConfigs(next); err != nil {
			return nil, fmt.Errorf("controller: %s: %w: %w", what, ErrInvalidConfig, err)
		}
	} else {
		for _, name := range slices.Sorted(maps.Keys(next)) {
			def, ok := lookup(name)
			if !ok {
				return nil, fmt.Errorf("controller: %s: %w: unknown config %q", what, ErrInvalidConfig, name)
			}
			if err := def.Validate(next[name]); err != nil {
				return nil, fmt.Errorf("controller: %s: %w: config %s: %v", what, ErrInvalidConfig, name, err)
			}
		}
	}
	if len(next) == 0 {
		return nil, nil
	}
	return next, nil
}

func opName(op OpType) string {
	switch op {
	case OpAppend:
		return "append"
	case OpSubtract:
		return "subtract"
	}
	return strconv.Itoa(int(op))
}

// editList appends the comma-separated items of v that list lacks, or
// removes them from it.
func editList(list, v string, add bool) string {
	split := func(s string) []string {
		var out []string
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
		return out
	}
	items := split(list)
	for _, item := range split(v) {
		has := slices.Contains(items, item)
		switch {
		case add && !has:
			items = append(items, item)
		case !add && has:
			items = slices.DeleteFunc(items, func(s string) bool { return s == item })
		}
	}
	return strings.Join(items, ",")
}
