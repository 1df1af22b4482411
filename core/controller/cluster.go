package controller

import (
	"context"
	"fmt"
	"math"
)

// maxProducerIDBlock bounds one AllocateProducerIDs call (Kafka hands out
// blocks of 1000).
const maxProducerIDBlock = 1 << 20

// validateBroker checks a registration's fields.
func validateBroker(b Broker) error {
	switch {
	case b.NodeID < 0:
		return fmt.Errorf("controller: broker %d: %w: negative node id", b.NodeID, ErrInvalidRequest)
	case b.Host == "" || len(b.Host) > 255:
		return fmt.Errorf("controller: broker %d: %w: host %q", b.NodeID, ErrInvalidRequest, b.Host)
	case b.Port < 1 || b.Port > 65535:
		return fmt.Errorf("controller: broker %d: %w: port %d", b.NodeID, ErrInvalidRequest, b.Port)
	case len(b.Rack) > 255:
		return fmt.Errorf("controller: broker %d: %w: rack name is %d bytes", b.NodeID, ErrInvalidRequest, len(b.Rack))
	}
	return nil
}

// RegisterBroker records b (a new broker or a re-registration with a new
// address) as given, fenced or not, without a heartbeat session: it is the
// administrative form (tests, tools). Brokers register with
// RegisterBrokerFenced. The broker's epoch becomes the raft index of the
// registration; b.Epoch is ignored.
func (c *Controller) RegisterBroker(ctx context.Context, b Broker) error {
	b.Epoch = 0
	if err := validateBroker(b); err != nil {
		return err
	}
	if err := c.checkActive(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.propose(ctx, &brokerRecord{Broker: b}); err != nil {
		return err
	}
	c.log.Info("registered broker", "node", b.NodeID, "host", b.Host, "port", b.Port)
	return nil
}

// AllocateProducerIDs reserves count consecutive producer ids and returns the
// first. The block is committed before the call returns, so no id is handed
// out twice, across restarts included.
func (c *Controller) AllocateProducerIDs(ctx context.Context, count int32) (int64, error) {
	if count < 1 || count > maxProducerIDBlock {
		return 0, fmt.Errorf("controller: producer id block of %d: %w: the size must be in [1, %d]",
			count, ErrInvalidRequest, maxProducerIDBlock)
	}
	if !c.isActive() && c.peers != nil {
		return c.forwardProducerIDs(ctx, count)
	}
	if err := c.checkActive(); err != nil {
		return 0, err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	first := c.Image().NextProducerID
	if first > math.MaxInt64-int64(count) {
		return 0, fmt.Errorf("controller: producer id block of %d: %w: the producer id space is exhausted", count, ErrPolicyViolation)
	}
	if err := firstErr(c.proposeAsActive(ctx, []record{&producerIDsRecord{First: first, Count: count}})); err != nil {
		return 0, err
	}
	return first, nil
}
