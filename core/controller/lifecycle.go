package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// BrokerSession is this node's life as a broker, as Kafka's
// BrokerLifecycleManager: it registers with the active controller, waits to
// catch up with the metadata log and be unfenced, heartbeats, and on
// shutdown asks the controller to move its leaderships away first.
type BrokerSession struct {
	c        *Controller
	broker   Broker
	interval time.Duration

	mu       sync.Mutex // guards epoch, stopping, offline, broker.PreviousEpoch
	epoch    int64
	stopping bool // a controlled shutdown began: every heartbeat asks for it
	offline  bool // the log dir went offline: every heartbeat reports it
	// kick asks Run for a heartbeat now.
	kick chan struct{}
}

// ReportLogDirOffline makes this and every later heartbeat report the
// broker's log directory offline, so that the controller moves its
// leaderships away; the next heartbeat is sent at once.
func (s *BrokerSession) ReportLogDirOffline() {
	s.mu.Lock()
	s.offline = true
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// StartBroker registers b (its NodeID must be this node's) and returns once
// the controller has unfenced it, which happens when this node has applied
// the metadata log up to its own registration. interval is
// broker.heartbeat.interval.ms. It retries while no controller is
// reachable, until ctx ends.
func (c *Controller) StartBroker(ctx context.Context, b Broker, interval time.Duration) (*BrokerSession, error) {
	if b.NodeID != c.cfg.NodeID {
		return nil, fmt.Errorf("controller: broker %d registering on node %d: %w", b.NodeID, c.cfg.NodeID, ErrInvalidRequest)
	}
	if interval <= 0 {
		return nil, fmt.Errorf("controller: heartbeat interval %v: %w", interval, ErrInvalidRequest)
	}
	s := &BrokerSession{c: c, broker: b, interval: interval, kick: make(chan struct{}, 1)}
	if err := s.register(ctx); err != nil {
		return nil, err
	}
	// Heartbeat quickly until unfenced; the controller unfences once this
	// node has applied its registration.
	poll := min(interval, 50*time.Millisecond)
	for {
		reply, err := s.heartbeat(ctx, false)
		if err == nil && !reply.Fenced {
			c.log.Info("broker unfenced", "node", b.NodeID, "epoch", s.Epoch())
			return s, nil
		}
		if err != nil && !retriable(err) && !errors.Is(err, ErrStaleBrokerEpoch) && !errors.Is(err, ErrBrokerNotRegistered) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("controller: broker %d waiting to be unfenced: %w", b.NodeID, ctx.Err())
		case <-time.After(poll):
		}
	}
}

func (s *BrokerSession) register(ctx context.Context) error {
	for {
		s.mu.Lock()
		b := s.broker
		s.mu.Unlock()
		epoch, err := s.c.RegisterBrokerFenced(ctx, b)
		if err == nil {
			s.mu.Lock()
			s.epoch = epoch
			// Registering again in the same life (the controller lost the
			// registration) is no unclean shutdown: the log stayed open.
			s.broker.PreviousEpoch = epoch
			s.mu.Unlock()
			return nil
		}
		if !retriable(err) {
			return fmt.Errorf("controller: broker %d registration: %w", s.broker.NodeID, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("controller: broker %d registration: %w (last: %w)", s.broker.NodeID, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Epoch is the broker epoch of the current registration.
func (s *BrokerSession) Epoch() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}

// heartbeat sends one heartbeat; a stale epoch (the controller lost the
// registration, e.g. to a restored snapshot) re-registers.
func (s *BrokerSession) heartbeat(ctx context.Context, shutdown bool) (HeartbeatReply, error) {
	hctx, cancel := context.WithTimeout(ctx, max(2*s.interval, time.Second))
	defer cancel()
	s.mu.Lock()
	if shutdown {
		s.stopping = true
	}
	shutdown, offline := s.stopping, s.offline
	s.mu.Unlock()
	reply, err := s.c.BrokerHeartbeat(hctx, Heartbeat{
		NodeID: s.broker.NodeID, Epoch: s.Epoch(), MetadataOffset: int64(s.c.Image().Offset), LogEndOffset: s.c.logEndOffset(), WantShutdown: shutdown,
		LogDirOffline: offline,
	})
	if errors.Is(err, ErrStaleBrokerEpoch) || errors.Is(err, ErrBrokerNotRegistered) {
		s.c.log.Warn("broker registration lost; registering again", "node", s.broker.NodeID, "err", err)
		if rerr := s.register(ctx); rerr != nil {
			return reply, rerr
		}
	}
	return reply, err
}

// Run heartbeats every interval until ctx ends.
func (s *BrokerSession) Run(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.kick:
		}
		if _, err := s.heartbeat(ctx, false); err != nil && ctx.Err() == nil {
			s.c.log.Warn("broker heartbeat failed", "node", s.broker.NodeID, "err", err)
		}
	}
}

// Shutdown is the controlled shutdown: it heartbeats with WantShutdown
// until the controller has moved this broker's leaderships away and lets
// it stop, or ctx ends.
func (s *BrokerSession) Shutdown(ctx context.Context) error {
	poll := min(s.interval, 50*time.Millisecond)
	for {
		reply, err := s.heartbeat(ctx, true)
		if err == nil && reply.ShouldShutdown {
			s.c.log.Info("controlled shutdown complete", "node", s.broker.NodeID)
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = errors.New("leaderships still moving")
			}
			return fmt.Errorf("controller: broker %d controlled shutdown: %w (last: %w)", s.broker.NodeID, ctx.Err(), err)
		case <-time.After(poll):
		}
	}
}
