package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/log/vfs"
)

// Config configures a controller node.
type Config struct {
	// NodeID is this node's id; it is also its raft server id.
	NodeID int32
	// Dir holds the raft log, stable store, snapshots and meta.properties,
	// e.g. <data_dir>/__cluster_metadata.
	Dir string
	// ClusterID is written to meta.properties when Dir is new (empty means
	// a random id); on later opens it must match the stored one if set.
	ClusterID string
	// Broker supplies topic defaults (partitions, replication factor, topic
	// configs); it must pass Validate.
	Broker config.Config
	// Transport carries raft traffic; nil means an in-memory transport for a
	// single voter. Raft closes it on Close.
	Transport raft.Transport
	// Logger receives the controller's and raft's logs; nil is slog.Default.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// FS is the file system the raft log and stable store live on; nil is
	// the operating system's. Tests pass a vfs/errorfs file system.
	FS vfs.FS
	// Tune, if set, adjusts the raft configuration before raft starts
	// (multi-voter timeouts, snapshot thresholds in tests).
	Tune func(*raft.Config)

	// ElectionTimeout is the multi-voter Raft heartbeat and election
	// timeout (the leader lease is half of it); 0 means one second. A
	// single voter always uses a short one: it has nobody to wait for.
	ElectionTimeout time.Duration

	// Voters, when set, make the node part of a multi-node quorum: raft
	// runs over Listener among these voters (bootstrapped from this list
	// on an empty store), and a node not listed follows the metadata log
	// as a raft non-voter once the active controller has registered it.
	// Empty means the single-voter default (Transport or in-memory).
	Voters []config.Voter
	// Listener is the bound controller listener (listeners.controller);
	// required with Voters. It carries raft and the controller RPCs; the
	// controller owns and closes it.
	Listener net.Listener
	// Advertised is the controller listener's address as peers dial it;
	// empty means the Listener's address (a wildcard is not allowed then).
	Advertised string
	// PeerSecurity secures the controller listener (raft and the RPCs,
	// in both directions); nil is PLAINTEXT, which admits anyone.
	PeerSecurity PeerSecurity
	// SuperUsers are the principals admitted on a secured controller
	// listener (security.super_users).
	SuperUsers []string
	// SessionTimeout is broker.session.timeout.ms: the active controller
	// fences a broker that has not heartbeated for this long. Zero never
	// fences a silent broker.
	SessionTimeout time.Duration
}

// Controller is one node of the metadata quorum.
type Controller struct {
	cfg   Config
	log   *slog.Logger
	now   func() time.Time
	raft  *raft.Raft
	store *raftStore

	// image is the latest applied image; only the fsm (and Open) store it.
	image atomic.Pointer[Image]

	// writeMu serialises the active controller's write path: validation
	// against the image, proposal, and waiting for the apply, so that each
	// validation sees the previous write's effect.
	writeMu sync.Mutex

	// mu guards subs, changed, ready and closed.
	mu      sync.Mutex
	subs    map[chan *Image]struct{}
	changed chan struct{} // closed and replaced on every image or leadership change
	ready   bool          // leader, and this term's controller record is applied
	closed  bool

	// sessions are the brokers' heartbeat times (active controller only).
	sessions sessions
	// progress is each quorum member's reported log end offset (active
	// controller only).
	progress quorumProgress
	// mux splits the controller listener between raft and the RPCs; nil
	// on a single node.
	mux *mux
	// peers carries RPCs to the active controller.
	peers *peerClient

	notifyCh chan bool
	obsCh    chan raft.Observation
	observer *raft.Observer
	done     chan struct{}
	wg       sync.WaitGroup
}

// Single-voter raft timings: a lone voter elects itself one heartbeat timeout
// (randomised up to twice that) after start.
const (
	singleVoterTimeout = 100 * time.Millisecond
	commitTimeout      = 5 * time.Millisecond
)

// Open opens the stores in cfg.Dir, bootstraps a single voter if they are
// empty, and starts raft. The returned controller's Image is never nil; call
// WaitLeader before proposing changes.
func Open(cfg Config) (*Controller, error) {
	if cfg.NodeID < 0 {
		return nil, fmt.Errorf("controller: node id %d is negative", cfg.NodeID)
	}
	if cfg.Dir == "" {
		return nil, errors.New("controller: metadata dir is empty")
	}
	if err := cfg.Broker.Validate(); err != nil {
		return nil, fmt.Errorf("controller: broker config: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	clusterID, err := loadOrCreateMeta(cfg.Dir, cfg.NodeID, cfg.ClusterID, cfg.Now())
	if err != nil {
		return nil, err
	}
	c := &Controller{
		cfg:      cfg,
		log:      cfg.Logger.With("component", "controller"),
		now:      cfg.Now,
		subs:     map[chan *Image]struct{}{},
		changed:  make(chan struct{}),
		notifyCh: make(chan bool, 16),
		obsCh:    make(chan raft.Observation, 16),
		done:     make(chan struct{}),
	}
	c.image.Store(emptyImage(clusterID))

	if cfg.FS == nil {
		cfg.FS = vfs.Default
		c.cfg.FS = vfs.Default
	}
	c.store, err = openMetadataStore(cfg.FS, cfg.Dir)
	if err != nil {
		return nil, err
	}
	rlog := newRaftLogger(cfg.Logger.With("component", "raft"))
	snaps, err := newSnapshotStore(cfg.FS, cfg.Dir, 2, c.store, time.Now)
	if err != nil {
		c.store.Close()
		return nil, fmt.Errorf("controller: snapshot store: %w", err)
	}
	trans := cfg.Transport
	if len(cfg.Voters) > 0 {
		if cfg.Listener == nil {
			c.store.Close()
			return nil, errors.New("controller: voters are set but the controller listener is not")
		}
		c.mux, err = newMux(cfg.Listener, cfg.Advertised, c.log, cfg.PeerSecurity, cfg.SuperUsers)
		if err != nil {
			c.store.Close()
			return nil, err
		}
		c.peers = newPeerClient(cfg.PeerSecurity)
		trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: c.mux.raftStream(), MaxPool: 3, Timeout: 10 * time.Second,
			Logger: newRaftLogger(cfg.Logger.With("component", "raft-transport")),
		})
	}
	if trans == nil {
		_, trans = raft.NewInmemTransport(raft.ServerAddress("gregor-controller-" + strconv.Itoa(int(cfg.NodeID))))
	}

	rc := raft.DefaultConfig()
	rc.LocalID = serverID(cfg.NodeID)
	rc.HeartbeatTimeout = singleVoterTimeout
	rc.ElectionTimeout = singleVoterTimeout
	rc.LeaderLeaseTimeout = singleVoterTimeout
	rc.CommitTimeout = commitTimeout
	if len(cfg.Voters) > 1 {
		d := cfg.ElectionTimeout
		if d <= 0 {
			d = time.Second
		}
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = d, d, d/2
	}
	rc.SnapshotThreshold = 4096
	rc.TrailingLogs = 1024
	rc.NotifyCh = c.notifyCh
	rc.Logger = rlog
	if cfg.Tune != nil {
		cfg.Tune(rc)
	}
	fail := func(err error) (*Controller, error) {
		if wc, ok := trans.(raft.WithClose); ok {
			_ = wc.Close()
		}
		if c.mux != nil {
			c.mux.Close()
		}
		c.store.Close()
		return nil, err
	}
	if err := raft.ValidateConfig(rc); err != nil {
		return fail(fmt.Errorf("controller: raft config: %w", err))
	}

	logs, err := raft.NewLogCache(512, c.store)
	if err != nil {
		return fail(fmt.Errorf("controller: log cache: %w", err))
	}
	existing, err := raft.HasExistingState(logs, c.store, snaps)
	if err != nil {
		return fail(fmt.Errorf("controller: inspect raft state: %w", err))
	}
	if !existing && c.isVoter() {
		voters := raft.Configuration{Servers: []raft.Server{{
			Suffrage: raft.Voter, ID: rc.LocalID, Address: trans.LocalAddr(),
		}}}
		if len(cfg.Voters) > 0 {
			voters.Servers = voters.Servers[:0]
			for _, v := range cfg.Voters {
				voters.Servers = append(voters.Servers, raft.Server{
					Suffrage: raft.Voter, ID: serverID(v.ID), Address: raft.ServerAddress(v.Address),
				})
			}
		}
		if err := raft.BootstrapCluster(rc, logs, c.store, snaps, trans, voters); err != nil {
			return fail(fmt.Errorf("controller: bootstrap: %w", err))
		}
		c.log.Info("bootstrapped metadata quorum", "node", cfg.NodeID, "cluster_id", clusterID, "voters", len(voters.Servers))
	}

	r, err := raft.NewRaft(rc, &fsm{c: c}, logs, c.store, snaps, trans)
	if err != nil {
		return fail(fmt.Errorf("controller: start raft: %w", err))
	}
	c.raft = r
	c.wg.Add(1)
	go c.stopOnMetadataLogFailure()
	c.observer = raft.NewObserver(c.obsCh, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	r.RegisterObserver(c.observer)
	c.wg.Add(1)
	go c.watchLeadership()
	if c.mux != nil {
		c.wg.Add(1)
		go c.serveRPC()
	}
	if cfg.SessionTimeout > 0 {
		c.wg.Add(1)
		go c.runSessions(max(cfg.SessionTimeout/8, 10*time.Millisecond))
	}
	return c, nil
}

// isVoter reports whether this node is a member of the quorum.
func (c *Controller) isVoter() bool {
	if len(c.cfg.Voters) == 0 {
		return true
	}
	for _, v := range c.cfg.Voters {
		if v.ID == c.cfg.NodeID {
			return true
		}
	}
	return false
}

func serverID(node int32) raft.ServerID { return raft.ServerID(strconv.Itoa(int(node))) }

// Close stops raft, closes the stores and every subscription channel.
func (c *Controller) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.ready = false
	c.mu.Unlock()

	c.raft.DeregisterObserver(c.observer)
	err := c.raft.Shutdown().Error()
	close(c.done)
	if c.mux != nil {
		c.mux.Close()
	}
	if c.peers != nil {
		c.peers.Close()
	}
	c.wg.Wait()
	if cerr := c.store.Close(); cerr != nil && err == nil {
		err = cerr
	}

	c.mu.Lock()
	for ch := range c.subs {
		close(ch)
	}
	c.subs = nil
	c.broadcastLocked()
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("controller: close: %w", err)
	}
	return nil
}

// Image is the latest committed metadata image; never nil.
func (c *Controller) Image() *Image { return c.image.Load() }

// Subscribe delivers the current image at once and then every new one.
// Delivery coalesces: a slow reader skips intermediate images but always
// gets the latest. The channel closes when cancel is called or the
// controller closes.
func (c *Controller) Subscribe() (<-chan *Image, func()) {
	ch := make(chan *Image, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	ch <- c.image.Load()
	if c.closed {
		close(ch)
		return ch, func() {}
	}
	c.subs[ch] = struct{}{}
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.subs[ch]; ok {
			delete(c.subs, ch)
			close(ch)
		}
	}
}

// publish makes im the current image and hands it to every subscriber.
func (c *Controller) publish(im *Image) {
	c.image.Store(im)
	c.mu.Lock()
	defer c.mu.Unlock()
	for ch := range c.subs {
		select {
		case ch <- im:
		default:
			// Replace the undelivered older image. Only publish sends, under
			// mu, so after the drain the send cannot block.
			select {
			case <-ch:
			default:
			}
			ch <- im
		}
	}
	c.broadcastLocked()
}

func (c *Controller) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// WaitLeader returns once this node is the active controller with its
// leadership record applied, or (on a non-voting or follower node) once a
// leader is known and the image names it as controller.
func (c *Controller) WaitLeader(ctx context.Context) error {
	for {
		c.mu.Lock()
		ready, closed, changed := c.ready, c.closed, c.changed
		c.mu.Unlock()
		if closed {
			return fmt.Errorf("controller: closed: %w", ErrNotController)
		}
		if ready {
			return nil
		}
		if _, id := c.raft.LeaderWithID(); id != "" && id != serverID(c.cfg.NodeID) &&
			serverID(c.Image().ControllerID) == id {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("controller: waiting for a leader: %w", ctx.Err())
		}
	}
}

// watchLeadership reacts to raft leadership changes: on election it appends a
// controller record, and the node accepts writes once that record is applied
// (which implies every earlier entry is applied too).
func (c *Controller) watchLeadership() {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.obsCh:
			c.mu.Lock()
			if !c.closed {
				c.broadcastLocked()
			}
			c.mu.Unlock()
		case leader := <-c.notifyCh:
			if !leader {
				c.setReady(false)
				c.log.Info("lost metadata leadership", "node", c.cfg.NodeID)
				continue
			}
			data, err := encodeRecord(&controllerRecord{NodeID: c.cfg.NodeID})
			if err == nil {
				f := c.raft.Apply(data, 0)
				if err = f.Error(); err == nil {
					if rerr, ok := f.Response().(error); ok {
						err = rerr
					}
				}
			}
			if err != nil {
				c.log.Warn("could not take over as controller", "node", c.cfg.NodeID, "err", err)
				continue
			}
			if c.raft.State() == raft.Leader {
				// Every broker's session starts afresh under a new
				// controller.
				c.sessions.reset()
				c.progress.reset()
				c.addNonvoters()
				c.setReady(true)
				c.log.Info("active controller", "node", c.cfg.NodeID, "offset", c.Image().Offset)
			}
		}
	}
}

func (c *Controller) setReady(v bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.ready = v
	c.broadcastLocked()
}
