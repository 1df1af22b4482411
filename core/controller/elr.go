package controller

import "slices"

// Eligible leader replicas (KIP-966), as Kafka's PartitionChangeBuilder
// keeps them. While a partition's ISR is below min.insync.replicas, the
// members that leave it stay eligible leaders (the ELR): they hold every
// committed record, because the high watermark only advances with at least
// min.insync.replicas members. ISR and ELR are disjoint; a replica that
// rejoins the ISR leaves the ELR, and one that shut down uncleanly leaves
// both. Once the ISR is empty, a usable ELR member is elected cleanly and
// becomes the ISR; unclean election is considered only when no ISR or ELR
// member qualifies, and clears the ELR.

// elrPolicy is the part of a partition change that ELR needs: whether the
// feature is on and the topic's effective min.insync.replicas.
type elrPolicy struct {
	enabled bool
	minISR  int
}

// updateELR recomputes c's ELR and last known ELR after its ISR was set,
// from prevISR (the ISR before the change). unclean lists replicas that
// shut down uncleanly and may not stay eligible.
func (c *change) updateELR(pol elrPolicy, prevISR []int32, unclean ...int32) {
	if !pol.enabled {
		c.p.ELR, c.p.LastKnownELR = nil, nil
		return
	}
	if len(c.p.ISR) >= pol.minISR {
		c.p.ELR, c.p.LastKnownELR = nil, nil
		return
	}
	var elr []int32
	for _, id := range c.p.Replicas { // replica order keeps the result deterministic
		was := slices.Contains(c.p.ELR, id) || slices.Contains(prevISR, id)
		if was && !slices.Contains(c.p.ISR, id) && !slices.Contains(unclean, id) {
			elr = append(elr, id)
		}
	}
	c.p.ELR = elr
}

// electELR elects a usable ELR member when the ISR is empty; it becomes the
// ISR and leaves the ELR. It reports whether one was elected.
func (c *change) electELR(im *Image, pol elrPolicy) bool {
	if !pol.enabled || len(c.p.ISR) > 0 {
		return false
	}
	for _, id := range c.p.Replicas {
		if slices.Contains(c.p.ELR, id) && im.Usable(id) {
			c.p.Leader, c.p.ISR = id, []int32{id}
			c.p.ELR = slices.DeleteFunc(c.p.ELR, func(x int32) bool { return x == id })
			return true
		}
	}
	return false
}

// noteLastKnownLeader records the last leader when the ISR becomes empty
// for the first time, and clears the field once the partition has a
// leader again, as Kafka's maybeUpdateLastKnownLeader.
func (c *change) noteLastKnownLeader(pol elrPolicy, prev Partition) {
	if !pol.enabled {
		return
	}
	switch {
	case len(c.p.ISR) == 0 && len(prev.ISR) > 0 && prev.Leader >= 0:
		c.p.LastKnownELR = []int32{prev.Leader}
	case len(c.p.ISR) == 0:
		// still leaderless: keep the last known leader
	case c.p.Leader >= 0:
		c.p.LastKnownELR = nil
	}
}

// removeFromISRWithELR drops id from the ISR; with ELR on the ISR may
// become empty (the member stays an eligible leader), otherwise the last
// member is kept as before.
func (c *change) removeFromISRWithELR(pol elrPolicy, id int32, unclean bool) {
	prev := slices.Clone(c.p.ISR)
	if !pol.enabled {
		c.removeFromISR(id)
		return
	}
	c.p.ISR = slices.DeleteFunc(c.p.ISR, func(x int32) bool { return x == id })
	if unclean {
		c.updateELR(pol, prev, id)
	} else {
		c.updateELR(pol, prev)
	}
}

// elrPolicyFor reads the feature level and the topic's effective
// min.insync.replicas.
func (c *Controller) elrPolicyFor(im *Image, topic string) elrPolicy {
	pol := elrPolicy{enabled: c.cfg.Broker.Replication.EligibleLeaderReplicasVersion >= 1, minISR: 1}
	const key = "min.insync.replicas"
	v, ok := im.Configs[ConfigResource{Type: ResourceTopic, Name: topic}][key]
	if !ok {
		v, ok = im.Configs[ConfigResource{Type: ResourceBroker, Name: ""}][key]
	}
	if !ok {
		v = c.cfg.Broker.TopicDefaults()[key]
	}
	n := 0
	for _, r := range v {
		if r < '0' || r > '9' || n > 1<<20 {
			return pol
		}
		n = n*10 + int(r-'0')
	}
	if n >= 1 {
		pol.minISR = n
	}
	return pol
}

// electWithELR elects a leader from the ISR, then (the ISR being empty)
// from the ELR, then the last known leader once ISR and ELR are both empty,
// then, with unclean, from any usable replica, which clears the ELR. It
// reports whether the partition has a leader afterwards.
func (c *change) electWithELR(im *Image, pol elrPolicy, unclean bool, prev Partition) bool {
	ok := true
	switch {
	case electClean(im, &c.p) >= 0:
		c.p.Leader = electClean(im, &c.p)
	case c.electELR(im, pol):
	case c.electLastKnownLeader(im, pol):
	case unclean && electUnclean(im, &c.p) >= 0:
		l := electUnclean(im, &c.p)
		c.p.Leader, c.p.ISR = l, []int32{l}
		c.p.ELR, c.p.LastKnownELR = nil, nil
	default:
		c.p.Leader, ok = -1, false
	}
	c.noteLastKnownLeader(pol, prev)
	return ok
}

// pruneELR drops ELR members that are no longer replicas or are back in
// the ISR (a reassignment or an ISR change planned without ELR rules), so
// the record keeps ISR and ELR disjoint subsets of the replicas.
func (c *change) pruneELR() {
	c.p.ELR = slices.DeleteFunc(c.p.ELR, func(id int32) bool {
		return !slices.Contains(c.p.Replicas, id) || slices.Contains(c.p.ISR, id)
	})
	if len(c.p.ELR) == 0 {
		c.p.ELR = nil
	}
}

// electLastKnownLeader elects the last known leader when the ISR and the
// ELR are both empty and it is usable again, as Kafka's
// canElectLastKnownLeader: it is the replica that had the ISR's data last
// (say a lone replica that restarted uncleanly and so left the ELR). Kafka
// does this whatever unclean.leader.election.enable says, as before ELR the
// last ISR member stayed in the ISR and was elected again. The leader
// becomes the whole ISR.
func (c *change) electLastKnownLeader(im *Image, pol elrPolicy) bool {
	if !pol.enabled || len(c.p.ISR) > 0 || len(c.p.ELR) > 0 || len(c.p.LastKnownELR) != 1 {
		return false
	}
	id := c.p.LastKnownELR[0]
	if !slices.Contains(c.p.Replicas, id) || !im.Usable(id) {
		return false
	}
	c.p.Leader, c.p.ISR = id, []int32{id}
	return true
}

// planUncleanShutdown plans, for a broker that registers again after an
// unclean shutdown (its previous broker epoch is not the registered one),
// its removal from every ISR and ELR it is in, as Kafka's
// handleBrokerUncleanShutdown: its log may have lost records it had
// acknowledged, so it may no longer be elected as if it held them. A
// partition it led loses its leader; others are elected when it is
// unfenced. Nothing happens with ELR off.
func (c *Controller) planUncleanShutdown(im *Image, id int32) []record {
	var out []record
	for _, t := range sortedTopics(im) {
		pol := c.elrPolicyFor(im, t.Name)
		if !pol.enabled {
			continue
		}
		for i := range t.Partitions {
			p := &t.Partitions[i]
			if !slices.Contains(p.ISR, id) && !slices.Contains(p.ELR, id) && p.Leader != id {
				continue
			}
			ch := newChange(t, p.Index)
			ch.removeFromISRWithELR(pol, id, true)
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

// planClearELR plans clearing the ELR and last known leader of every
// partition of topic (or, with topic "", of every topic), as Kafka does
// when min.insync.replicas changes: the members' eligibility was judged
// against the old value.
func planClearELR(im *Image, topic string) []record {
	var out []record
	for _, t := range sortedTopics(im) {
		if topic != "" && t.Name != topic {
			continue
		}
		for i := range t.Partitions {
			if len(t.Partitions[i].ELR) == 0 && len(t.Partitions[i].LastKnownELR) == 0 {
				continue
			}
			ch := newChange(t, int32(i))
			ch.p.ELR, ch.p.LastKnownELR = nil, nil
			if r := ch.record(); r != nil {
				out = append(out, r)
			}
		}
	}
	return out
}
