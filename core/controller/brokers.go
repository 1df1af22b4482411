package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"
)

// Heartbeat is a broker's periodic report to the active controller
// (Kafka's BrokerHeartbeat).
type Heartbeat struct {
	NodeID int32
	// Epoch is the broker epoch its registration returned.
	Epoch int64
	// MetadataOffset is the last metadata offset the broker has applied.
	MetadataOffset int64
	// LogEndOffset is the broker's last raft log index (0: not reported).
	LogEndOffset int64
	// WantShutdown asks for a controlled shutdown.
	WantShutdown bool
	// LogDirOffline reports that the broker's log directory went offline
	// after a storage error (Kafka's OfflineLogDirs, BrokerHeartbeat v1).
	LogDirOffline bool
}

// HeartbeatReply is the controller's answer.
type HeartbeatReply struct {
	// CaughtUp: the broker has applied its own registration.
	CaughtUp bool
	Fenced   bool
	// ShouldShutdown: the controlled shutdown is complete; the broker may
	// stop.
	ShouldShutdown bool
}

// sessions remembers when the active controller last heard from each
// broker (Kafka's BrokerHeartbeatManager). It is not replicated: a new
// active controller starts every session afresh.
type sessions struct {
	mu   sync.Mutex // guards last
	last map[int32]time.Time
}

func (s *sessions) touch(id int32, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[int32]time.Time{}
	}
	s.last[id] = now
}

func (s *sessions) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = nil
}

// expired lists the brokers among ids last heard from more than timeout
// before now; a broker never heard from starts its session now.
func (s *sessions) expired(ids []int32, now time.Time, timeout time.Duration) []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[int32]time.Time{}
	}
	var out []int32
	for _, id := range ids {
		t, ok := s.last[id]
		switch {
		case !ok:
			s.last[id] = now
		case now.Sub(t) > timeout:
			out = append(out, id)
		}
	}
	return out
}

// RegisterBrokerFenced is Kafka's BrokerRegistration: it records b as a
// new registration that starts fenced, and returns the broker epoch. If
// the broker's previous registration was not shut down cleanly (it is
// still unfenced), its leaderships and ISR memberships are withdrawn in the
// same step, so it leads again only under a new leader epoch. If b's
// previous broker epoch is not the registered one (its log was not closed
// cleanly under that registration), it also leaves every ISR and ELR, as
// Kafka's unclean shutdown handling (KIP-966).
func (c *Controller) RegisterBrokerFenced(ctx context.Context, b Broker) (int64, error) {
	b.Epoch, b.Fenced, b.InControlledShutdown = 0, true, false
	if err := validateBroker(b); err != nil {
		return 0, err
	}
	if !c.isActive() {
		return c.forwardRegistration(ctx, b)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	im := c.Image()
	records := []record{&brokerRecord{Broker: b}}
	if old, ok := im.Brokers[b.NodeID]; ok {
		after, err := withRecord(im, &brokerRecord{Broker: b})
		if err != nil {
			return 0, err
		}
		if !old.Fenced {
			loss := c.planBrokerLoss(after, b.NodeID)
			records = append(records, loss...)
			if after, err = withRecords(after, loss); err != nil {
				return 0, err
			}
		}
		if b.PreviousEpoch != 0 && b.PreviousEpoch != old.Epoch {
			unclean := c.planUncleanShutdown(after, b.NodeID)
			if len(unclean) > 0 {
				c.log.Warn("broker registered after an unclean shutdown; removing it from ISRs and eligible leader replicas",
					"node", b.NodeID, "previous_epoch", b.PreviousEpoch, "registered_epoch", old.Epoch, "partition_changes", len(unclean))
			}
			records = append(records, unclean...)
		}
	}
	if err := c.proposePlan(ctx, records); err != nil {
		return 0, err
	}
	c.sessions.touch(b.NodeID, c.now())
	c.addNonvoters()
	br, ok := c.Image().Brokers[b.NodeID]
	if !ok {
		return 0, fmt.Errorf("controller: broker %d: %w: registration not applied", b.NodeID, ErrBrokerNotRegistered)
	}
	c.log.Info("registered broker", "node", b.NodeID, "epoch", br.Epoch, "host", b.Host, "port", b.Port, "rack", b.Rack)
	return br.Epoch, nil
}

// BrokerHeartbeat records a heartbeat: it unfences a caught-up broker and
// drives a requested controlled shutdown, moving the broker's leaderships
// to other ISR members before it may stop.
func (c *Controller) BrokerHeartbeat(ctx context.Context, hb Heartbeat) (HeartbeatReply, error) {
	if !c.isActive() {
		return c.forwardHeartbeat(ctx, hb)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	im := c.Image()
	br, ok := im.Brokers[hb.NodeID]
	if !ok {
		return HeartbeatReply{}, fmt.Errorf("controller: broker %d: %w", hb.NodeID, ErrBrokerNotRegistered)
	}
	if br.Epoch != hb.Epoch {
		return HeartbeatReply{}, fmt.Errorf("controller: broker %d: %w: %d, the registration's is %d", hb.NodeID, ErrStaleBrokerEpoch, hb.Epoch, br.Epoch)
	}
	c.sessions.touch(hb.NodeID, c.now())
	c.recordProgress(hb)
	reply := HeartbeatReply{CaughtUp: hb.MetadataOffset >= br.Epoch, Fenced: br.Fenced}
	if hb.LogDirOffline && !br.LogDirOffline {
		if err := c.takeLogDirOffline(ctx, im, br); err != nil {
			return reply, err
		}
		im = c.Image()
		br = im.Brokers[hb.NodeID]
	}

	switch {
	case hb.WantShutdown && br.Fenced:
		reply.ShouldShutdown = true
	case hb.WantShutdown:
		state := &brokerStateRecord{NodeID: br.NodeID, Epoch: br.Epoch, ControlledShutdown: true}
		after, err := withRecord(im, state)
		if err != nil {
			return reply, err
		}
		records := c.planBrokerLoss(after, br.NodeID)
		if !br.InControlledShutdown {
			records = append([]record{state}, records...)
		}
		if err := c.proposePlan(ctx, records); err != nil {
			return reply, err
		}
		if leads := c.Image().leaderships(br.NodeID); leads > 0 {
			return reply, nil
		}
		// Nothing is led here any more: the broker may stop, fenced. It
		// stays fenced until it registers again.
		fence := &brokerStateRecord{NodeID: br.NodeID, Epoch: br.Epoch, Fenced: true, ControlledShutdown: true}
		if err := firstErr(c.proposeAsActive(ctx, []record{fence})); err != nil {
			return reply, err
		}
		c.log.Info("controlled shutdown complete", "node", br.NodeID)
		reply.Fenced, reply.ShouldShutdown = true, true
	case br.Fenced && br.InControlledShutdown:
		// Shut down: a late ordinary heartbeat must not bring it back.
	case br.Fenced && reply.CaughtUp:
		unfence := &brokerStateRecord{NodeID: br.NodeID, Epoch: br.Epoch}
		if err := firstErr(c.proposeAsActive(ctx, []record{unfence})); err != nil {
			return reply, err
		}
		c.log.Info("unfenced broker", "node", br.NodeID, "epoch", br.Epoch)
		reply.Fenced = false
		if err := firstErr(c.proposeAsActive(ctx, c.planElections(c.Image()))); err != nil {
			c.log.Warn("electing leaders after an unfence", "node", br.NodeID, "err", err)
		}
	}
	return reply, nil
}

// takeLogDirOffline records that br's log dir is offline and, in the same
// proposal, moves its leaderships to other in-sync replicas and removes it
// from every ISR it is in (Kafka's handling of offline log dirs in
// ReplicationControlManager). The caller holds writeMu.
func (c *Controller) takeLogDirOffline(ctx context.Context, im *Image, br Broker) error {
	state := &brokerStateRecord{NodeID: br.NodeID, Epoch: br.Epoch, Fenced: br.Fenced,
		ControlledShutdown: br.InControlledShutdown, LogDirOffline: true}
	after, err := withRecord(im, state)
	if err != nil {
		return err
	}
	records := append([]record{state}, c.planBrokerLoss(after, br.NodeID)...)
	if err := c.proposePlan(ctx, records); err != nil {
		return err
	}
	c.log.Warn("broker log dir offline; moved its leaderships and removed it from ISRs", "node", br.NodeID,
		"partition_changes", len(records)-1)
	return nil
}

// ExpireSessions fences every unfenced broker not heard from within the
// session timeout and moves its leaderships, moves any leaderships and ISR
// memberships that fenced or offline-dir brokers still hold (see
// planUnusableCleanup), then elects leaders for
// partitions that have none. The active controller runs it periodically;
// elsewhere it does nothing.
func (c *Controller) ExpireSessions(ctx context.Context) error {
	if !c.isActive() {
		return nil
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	im := c.Image()
	var live []int32
	for _, id := range im.BrokerIDs() {
		if !im.Brokers[id].Fenced {
			live = append(live, id)
		}
	}
	var records []record
	if c.cfg.SessionTimeout > 0 {
		for _, id := range c.sessions.expired(live, c.now(), c.cfg.SessionTimeout) {
			br := im.Brokers[id]
			state := &brokerStateRecord{NodeID: id, Epoch: br.Epoch, Fenced: true}
			after, err := withRecord(im, state)
			if err != nil {
				return err
			}
			c.log.Warn("broker session expired; fencing it", "node", id, "epoch", br.Epoch, "timeout", c.cfg.SessionTimeout)
			loss := c.planBrokerLoss(after, id)
			records = append(records, state)
			records = append(records, loss...)
			// The next broker's plan must start from these changes, or
			// its partition changes carry stale partition epochs and are
			// refused, leaving that broker a leader and ISR member.
			if im, err = withRecords(after, loss); err != nil {
				return err
			}
		}
	}
	// Converge: re-plan the loss of every fenced or offline-dir broker
	// that a partially applied earlier plan left leading or in ISRs.
	cleanup, err := c.planUnusableCleanup(im)
	if err != nil {
		return err
	}
	records = append(records, cleanup...)
	if err := c.proposePlan(ctx, records); err != nil {
		return err
	}
	return firstErr(c.proposeAsActive(ctx, c.planElections(c.Image())))
}

// runSessions calls ExpireSessions every interval while the controller runs.
func (c *Controller) runSessions(interval time.Duration) {
	defer c.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 10*interval+time.Second)
			if err := c.ExpireSessions(ctx); err != nil {
				c.log.Warn("broker session check", "err", err)
			}
			cancel()
		}
	}
}

// withRecord is im with r applied, for planning changes that follow r.
func withRecord(im *Image, r record) (*Image, error) {
	b := newBuilder(im)
	if err := r.apply(b, im.Offset); err != nil {
		return nil, err
	}
	return b.im, nil
}

// withRecords is withRecord for records applied in order.
func withRecords(im *Image, records []record) (*Image, error) {
	for _, r := range records {
		var err error
		if im, err = withRecord(im, r); err != nil {
			return nil, err
		}
	}
	return im, nil
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sortedTopics lists im's topics by name, for deterministic plans.
func sortedTopics(im *Image) []*Topic {
	out := make([]*Topic, 0, len(im.Topics))
	for _, t := range im.Topics {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// planBrokerLoss plans the changes that take broker id (no longer usable
// in im) out of every ISR it is in, unless it is the last member, and
// moves its leaderships to other ISR members, leaving a partition without
// one leaderless (or, where the topic allows unclean election, led by a
// live replica outside the ISR).
func (c *Controller) planBrokerLoss(im *Image, id int32) []record {
	var out []record
	for _, t := range sortedTopics(im) {
		for i := range t.Partitions {
			p := &t.Partitions[i]
			if p.Leader != id && !slices.Contains(p.ISR, id) {
				continue
			}
			ch := newChange(t, p.Index)
			pol := c.elrPolicyFor(im, t.Name)
			ch.removeFromISRWithELR(pol, id, false)
			if ch.p.Leader == id || len(ch.p.ISR) == 0 {
				ch.electWithELR(im, pol, c.uncleanAllowed(im, t.Name), *p)
			}
			if r := ch.record(); r != nil {
				out = append(out, r)
			}
		}
	}
	return out
}

// planElections elects leaders for partitions that have none.
func (c *Controller) planElections(im *Image) []record {
	var out []record
	for _, t := range sortedTopics(im) {
		for i := range t.Partitions {
			p := &t.Partitions[i]
			if _, registered := im.Brokers[p.Leader]; p.Leader >= 0 && registered {
				continue // led by a registered broker (a fenced leader waits for its unfence)
			}
			ch := newChange(t, p.Index)
			if ch.electWithELR(im, c.elrPolicyFor(im, t.Name), c.uncleanAllowed(im, t.Name), *p) {
				if r := ch.record(); r != nil {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// uncleanAllowed reads the topic's effective unclean.leader.election.enable.
func (c *Controller) uncleanAllowed(im *Image, topic string) bool {
	const key = "unclean.leader.election.enable"
	if v, ok := im.Configs[ConfigResource{Type: ResourceTopic, Name: topic}][key]; ok {
		return v == "true"
	}
	if v, ok := im.Configs[ConfigResource{Type: ResourceBroker, Name: ""}][key]; ok {
		return v == "true"
	}
	return c.cfg.Broker.TopicDefaults()[key] == "true"
}

// leaderships counts the partitions broker id leads.
func (im *Image) leaderships(id int32) int {
	n := 0
	for _, t := range im.Topics {
		for i := range t.Partitions {
			if t.Partitions[i].Leader == id {
				n++
			}
		}
	}
	return n
}
