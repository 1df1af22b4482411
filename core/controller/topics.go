package controller

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/google/uuid"

	"github.com/gregorbroker/gregor/core/config"
)

// maxPartitionsPerRequest bounds the partitions one CreateTopics or
// CreatePartitions request may add (Kafka's limit on records per user
// operation); beyond it every topic in the request fails with
// ErrPolicyViolation.
const maxPartitionsPerRequest = 10000

// maxTopicNameLength is Kafka's limit: a partition directory name
// (<topic>-<partition>) must fit in 255 bytes.
const maxTopicNameLength = 249

// Internal topic names.
const (
	consumerOffsetsTopic  = "__consumer_offsets"
	transactionStateTopic = "__transaction_state"
)

// CreateTopic asks for one new topic.
type CreateTopic struct {
	Name string
	// NumPartitions is -1 for the broker default.
	NumPartitions int32
	// ReplicationFactor is -1 for the broker default.
	ReplicationFactor int16
	// Assignments, if not empty, places partitions 0..n-1 by hand;
	// NumPartitions and ReplicationFactor must then both be -1.
	Assignments map[int32][]int32
	Configs     map[string]string
}

// CreatePartitions asks to grow a topic to Count partitions.
type CreatePartitions struct {
	Topic string
	Count int32
	// Assignments, if not nil, places the new partitions by hand, one entry
	// per new partition.
	Assignments [][]int32
}

// TopicResult is the outcome for one topic of a topic operation.
type TopicResult struct {
	Name              string
	ID                uuid.UUID
	NumPartitions     int32
	ReplicationFactor int16
	// Configs are the topic's effective configs (broker defaults overlaid
	// with its overrides); set by CreateTopics only.
	Configs map[string]string
	Err     error
}

// ValidateTopicName applies Kafka's rules: non-empty, not "." or "..", at
// most 249 characters from [a-zA-Z0-9._-].
func ValidateTopicName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("controller: topic %q: %w: %s", name, ErrInvalidTopic, why)
	}
	switch {
	case name == "":
		return bad("the name is empty")
	case name == "." || name == "..":
		return bad(`"." and ".." are not allowed`)
	case len(name) > maxTopicNameLength:
		return bad(fmt.Sprintf("the name is %d characters, more than %d", len(name), maxTopicNameLength))
	}
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '-') {
			return bad("legal characters are ASCII letters, digits, '.', '_' and '-'")
		}
	}
	return nil
}

// collisionKey maps names that Kafka's metrics cannot tell apart ('.' and
// '_') to one key.
func collisionKey(name string) string { return strings.ReplaceAll(name, ".", "_") }

func isInternalTopic(name string) bool {
	return name == consumerOffsetsTopic || name == transactionStateTopic
}

// effectiveConfigs overlays a topic's overrides on the broker defaults.
func (c *Controller) effectiveConfigs(overrides map[string]string) map[string]string {
	m := c.cfg.Broker.TopicDefaults()
	maps.Copy(m, overrides)
	return m
}

// CreateTopics validates each topic and, unless validateOnly, creates the
// valid ones. Results follow the order of reqs.
func (c *Controller) CreateTopics(ctx context.Context, reqs []CreateTopic, validateOnly bool) []TopicResult {
	results := make([]TopicResult, len(reqs))
	for i, r := range reqs {
		results[i].Name = r.Name
	}
	failAll := func(err error) []TopicResult {
		for i := range results {
			results[i].Err = err
		}
		return results
	}
	if err := c.checkWritable(ctx); err != nil {
		return failAll(err)
	}
	var total int64
	for _, r := range reqs {
		switch {
		case len(r.Assignments) > 0:
			total += int64(len(r.Assignments))
		case r.NumPartitions == -1:
			total += int64(c.cfg.Broker.Topics.DefaultPartitions)
		case r.NumPartitions > 0:
			total += int64(r.NumPartitions)
		}
	}
	if total > maxPartitionsPerRequest {
		return failAll(fmt.Errorf("controller: %w: the request creates %d partitions, more than %d",
			ErrPolicyViolation, total, maxPartitionsPerRequest))
	}

	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	im := c.Image()
	seen := make(map[string]int, len(reqs))
	for _, r := range reqs {
		seen[r.Name]++
	}
	// Names that differ only in '.' versus '_' collide, against existing
	// topics and within the request.
	collisions := map[string]string{}
	for name := range im.Topics {
		if strings.ContainsAny(name, "._") {
			collisions[collisionKey(name)] = name
		}
	}

	var records []record
	var recordOf []int
	for i, r := range reqs {
		res := &results[i]
		if seen[r.Name] > 1 {
			res.Err = fmt.Errorf("controller: topic %q: %w: the request lists it more than once", r.Name, ErrInvalidRequest)
			continue
		}
		rec, err := c.planTopic(im, r, collisions)
		if err != nil {
			res.Err = err
			continue
		}
		if strings.ContainsAny(r.Name, "._") {
			collisions[collisionKey(r.Name)] = r.Name
		}
		res.NumPartitions = int32(len(rec.Partitions))
		res.ReplicationFactor = int16(len(rec.Partitions[0].Replicas))
		res.Configs = c.effectiveConfigs(rec.Configs)
		if !validateOnly {
			res.ID = rec.ID
			records = append(records, rec)
			recordOf = append(recordOf, i)
		}
	}
	for j, err := range c.proposeAll(ctx, records) {
		if err != nil {
			results[recordOf[j]].Err = err
		} else {
			c.log.Info("created topic", "topic", reqs[recordOf[j]].Name, "id", results[recordOf[j]].ID,
				"partitions", results[recordOf[j]].NumPartitions)
		}
	}
	return results
}

// planTopic validates r against im and builds its record.
func (c *Controller) planTopic(im *Image, r CreateTopic, collisions map[string]string) (*topicRecord, error) {
	if err := ValidateTopicName(r.Name); err != nil {
		return nil, err
	}
	if _, ok := im.Topics[r.Name]; ok {
		return nil, fmt.Errorf("controller: topic %q: %w", r.Name, ErrTopicExists)
	}
	if other, ok := collisions[collisionKey(r.Name)]; ok && strings.ContainsAny(r.Name, "._") {
		return nil, fmt.Errorf("controller: topic %q: %w: it collides with topic %q ('.' and '_' are interchangeable in metric names)",
			r.Name, ErrInvalidTopic, other)
	}
	if err := config.ValidateTopicConfigs(r.Configs); err != nil {
		return nil, fmt.Errorf("controller: topic %q: %w: %w", r.Name, ErrInvalidConfig, err)
	}

	var assignment [][]int32
	if len(r.Assignments) > 0 {
		if r.ReplicationFactor != -1 {
			return nil, fmt.Errorf("controller: topic %q: %w: a manual partition assignment was given, but the replication factor is not -1",
				r.Name, ErrInvalidRequest)
		}
		if r.NumPartitions != -1 {
			return nil, fmt.Errorf("controller: topic %q: %w: a manual partition assignment was given, but the number of partitions is not -1",
				r.Name, ErrInvalidRequest)
		}
		assignment = make([][]int32, len(r.Assignments))
		rf := 0
		for p := int32(0); p < int32(len(r.Assignments)); p++ {
			replicas, ok := r.Assignments[p]
			if !ok {
				return nil, fmt.Errorf("controller: topic %q: %w: partitions must be numbered 0 to %d without gaps",
					r.Name, ErrInvalidReplicaAssignment, len(r.Assignments)-1)
			}
			if err := checkAssignment(im, r.Name, p, replicas, rf); err != nil {
				return nil, err
			}
			rf = len(replicas)
			assignment[p] = append([]int32(nil), replicas...)
		}
	} else {
		numPartitions, rf := r.NumPartitions, r.ReplicationFactor
		if rf == -1 {
			rf = c.cfg.Broker.Topics.DefaultReplicationFactor
		}
		if numPartitions == -1 {
			numPartitions = c.cfg.Broker.Topics.DefaultPartitions
		}
		if rf < 1 {
			return nil, fmt.Errorf("controller: topic %q: %w: replication factor must be larger than 0, or -1 to use the default",
				r.Name, ErrInvalidReplicationFactor)
		}
		if numPartitions < 1 {
			return nil, fmt.Errorf("controller: topic %q: %w: number of partitions must be larger than 0, or -1 to use the default",
				r.Name, ErrInvalidPartitions)
		}
		var err error
		if assignment, err = autoAssign(im, r.Name, 0, numPartitions, rf, -1); err != nil {
			return nil, err
		}
	}

	id, err := newTopicID(im)
	if err != nil {
		return nil, err
	}
	var configs map[string]string
	if len(r.Configs) > 0 {
		configs = maps.Clone(r.Configs)
	}
	parts, err := newPartitionsFor(im, r.Name, 0, assignment)
	if err != nil {
		return nil, err
	}
	return &topicRecord{
		Name:       r.Name,
		ID:         id,
		Internal:   isInternalTopic(r.Name),
		Partitions: parts,
		Configs:    configs,
	}, nil
}

// newTopicID draws a random UUIDv4 that is neither zero nor in use.
func newTopicID(im *Image) (uuid.UUID, error) {
	for {
		id, err := uuid.NewRandom()
		if err != nil {
			return uuid.Nil, fmt.Errorf("controller: topic id: %w", err)
		}
		if _, taken := im.TopicsByID[id]; !taken && id != uuid.Nil {
			return id, nil
		}
	}
}

// DeleteTopics deletes topics named in names or identified in ids. Results
// hold one entry per name followed by one per id, in order; a topic named
// twice (or by both name and id) is deleted once and reported for each
// mention, except that a literal duplicate is ErrInvalidRequest.
func (c *Controller) DeleteTopics(ctx context.Context, names []string, ids []uuid.UUID) []TopicResult {
	results := make([]TopicResult, len(names)+len(ids))
	for i, n := range names {
		results[i].Name = n
	}
	for i, id := range ids {
		results[len(names)+i].ID = id
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

	nameCount := make(map[string]int, len(names))
	for _, n := range names {
		nameCount[n]++
	}
	idCount := make(map[uuid.UUID]int, len(ids))
	for _, id := range ids {
		idCount[id]++
	}
	targets := map[uuid.UUID][]int{} // topic id -> result indexes
	var order []*Topic
	target := func(i int, t *Topic) {
		results[i].Name, results[i].ID = t.Name, t.ID
		results[i].NumPartitions, results[i].ReplicationFactor = int32(len(t.Partitions)), t.ReplicationFactor()
		if _, ok := targets[t.ID]; !ok {
			order = append(order, t)
		}
		targets[t.ID] = append(targets[t.ID], i)
	}
	for i, n := range names {
		t, ok := im.Topics[n]
		switch {
		case nameCount[n] > 1:
			results[i].Err = fmt.Errorf("controller: topic %q: %w: the request lists it more than once", n, ErrInvalidRequest)
		case !ok:
			results[i].Err = fmt.Errorf("controller: topic %q: %w", n, ErrUnknownTopic)
		default:
			target(i, t)
		}
	}
	for j, id := range ids {
		i := len(names) + j
		t, ok := im.TopicsByID[id]
		switch {
		case id == uuid.Nil:
			results[i].Err = fmt.Errorf("controller: %w: neither a topic name nor a topic id was given", ErrInvalidRequest)
		case idCount[id] > 1:
			results[i].Err = fmt.Errorf("controller: topic id %s: %w: the request lists it more than once", id, ErrInvalidRequest)
		case !ok:
			results[i].Err = fmt.Errorf("controller: topic id %s: %w: %w", id, ErrUnknownTopicID, ErrUnknownTopic)
		default:
			target(i, t)
		}
	}
	records := make([]record, len(order))
	for k, t := range order {
		records[k] = &deleteTopicRecord{ID: t.ID, Name: t.Name}
	}
	for k, err := range c.proposeAll(ctx, records) {
		if err == nil {
			c.log.Info("deleted topic", "topic", order[k].Name, "id", order[k].ID)
		}
		for _, i := range targets[order[k].ID] {
			results[i].Err = err
		}
	}
	return results
}

// CreatePartitions grows topics. Results follow the order of reqs.
func (c *Controller) CreatePartitions(ctx context.Context, reqs []CreatePartitions, validateOnly bool) []TopicResult {
	results := make([]TopicResult, len(reqs))
	for i, r := range reqs {
		results[i].Name = r.Topic
	}
	failAll := func(err error) []TopicResult {
		for i := range results {
			results[i].Err = err
		}
		return results
	}
	if err := c.checkWritable(ctx); err != nil {
		return failAll(err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	im := c.Image()

	var total int64
	seen := make(map[string]int, len(reqs))
	for _, r := range reqs {
		seen[r.Topic]++
		if t, ok := im.Topics[r.Topic]; ok && int64(r.Count) > int64(len(t.Partitions)) {
			total += int64(r.Count) - int64(len(t.Partitions))
		}
	}
	if total > maxPartitionsPerRequest {
		return failAll(fmt.Errorf("controller: %w: the request adds %d partitions, more than %d",
			ErrPolicyViolation, total, maxPartitionsPerRequest))
	}

	var records []record
	var recordOf []int
	for i, r := range reqs {
		res := &results[i]
		if seen[r.Topic] > 1 {
			res.Err = fmt.Errorf("controller: topic %q: %w: the request lists it more than once", r.Topic, ErrInvalidRequest)
			continue
		}
		rec, err := planPartitions(im, r)
		if err != nil {
			res.Err = err
			continue
		}
		t := im.Topics[r.Topic]
		res.ID, res.NumPartitions, res.ReplicationFactor = t.ID, r.Count, t.ReplicationFactor()
		if !validateOnly {
			records = append(records, rec)
			recordOf = append(recordOf, i)
		}
	}
	for j, err := range c.proposeAll(ctx, records) {
		if err != nil {
			results[recordOf[j]].Err = err
		}
	}
	return results
}

func planPartitions(im *Image, r CreatePartitions) (*partitionsRecord, error) {
	t, ok := im.Topics[r.Topic]
	if !ok {
		return nil, fmt.Errorf("controller: topic %q: %w", r.Topic, ErrUnknownTopic)
	}
	current := int32(len(t.Partitions))
	switch {
	case r.Count < current:
		return nil, fmt.Errorf("controller: topic %q: %w: the topic has %d partitions, more than the requested %d",
			r.Topic, ErrInvalidPartitions, current, r.Count)
	case r.Count == current:
		return nil, fmt.Errorf("controller: topic %q: %w: the topic already has %d partitions", r.Topic, ErrInvalidPartitions, current)
	}
	add := r.Count - current
	rf := t.ReplicationFactor()
	var assignment [][]int32
	if r.Assignments != nil {
		if int64(len(r.Assignments)) != int64(add) {
			return nil, fmt.Errorf("controller: topic %q: %w: %d partition(s) would be added, but %d assignment(s) were given",
				r.Topic, ErrInvalidReplicaAssignment, add, len(r.Assignments))
		}
		assignment = make([][]int32, add)
		for k, replicas := range r.Assignments {
			if err := checkAssignment(im, r.Topic, current+int32(k), replicas, int(rf)); err != nil {
				return nil, err
			}
			assignment[k] = append([]int32(nil), replicas...)
		}
	} else {
		// Continue the existing layout: start where partition 0's leader sits.
		start := -1
		for i, id := range im.usableBrokerIDs() {
			if id == t.Partitions[0].Replicas[0] {
				start = i
			}
		}
		var err error
		if assignment, err = autoAssign(im, r.Topic, current, add, rf, start); err != nil {
			return nil, err
		}
	}
	parts, err := newPartitionsFor(im, r.Topic, current, assignment)
	if err != nil {
		return nil, err
	}
	return &partitionsRecord{TopicID: t.ID, Partitions: parts}, nil
}
