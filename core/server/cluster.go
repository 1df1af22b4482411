package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/log"
)

// clusterIDFor is the cluster id a new data directory is formatted with:
// cluster_id when set; in a multi-node cluster without one, an id derived
// from the voter list, so that every node agrees on it without a separate
// format step; otherwise empty (a random id).
func clusterIDFor(cfg config.Config) string {
	if cfg.ClusterID != "" || !cfg.MultiNode() {
		return cfg.ClusterID
	}
	voters := append([]string(nil), cfg.Cluster.Voters...)
	for i := range voters {
		voters[i] = strings.TrimSpace(voters[i])
	}
	sort.Strings(voters)
	sum := sha256.Sum256([]byte("gregor-cluster\x00" + strings.Join(voters, ",")))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// bindController binds listeners.controller, which carries raft and the
// controller RPCs in a multi-node cluster.
func (s *Server) bindController() error {
	if !s.cfg.MultiNode() {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.Listeners.Controller)
	if err != nil {
		return fmt.Errorf("server: listeners.controller: %w", err)
	}
	s.ctrlLn = ln
	return nil
}

// ControllerAddr is the bound address of the controller listener, or "".
func (s *Server) ControllerAddr() string {
	if s.ctrlLn == nil {
		return ""
	}
	return s.ctrlLn.Addr().String()
}

// controllerAdvertised is the controller address peers dial: a voter's
// address from cluster.voters, otherwise the bound listener's.
func (s *Server) controllerAdvertised() string {
	for _, v := range s.cfg.Voters() {
		if v.ID == s.cfg.NodeID {
			return v.Address
		}
	}
	return s.ControllerAddr()
}

// controllerConfig configures this node's member of the metadata quorum:
// the single embedded voter by default, or a voter or non-voter of
// cluster.voters over listeners.controller.
func (s *Server) controllerConfig() (controller.Config, error) {
	cfg := controller.Config{
		NodeID:         s.cfg.NodeID,
		Dir:            filepath.Join(s.cfg.DataDir, MetadataDirName),
		ClusterID:      s.meta.ClusterID,
		Broker:         s.cfg,
		Logger:         s.logger.With("component", "controller"),
		Now:            s.now,
		SessionTimeout: time.Duration(s.cfg.Cluster.BrokerSessionTimeoutMs) * time.Millisecond,
	}
	if s.cfg.MultiNode() {
		cfg.Voters = s.cfg.Voters()
		cfg.Listener = s.ctrlLn
		cfg.Advertised = s.controllerAdvertised()
		cfg.ElectionTimeout = time.Duration(s.cfg.Cluster.QuorumElectionTimeoutMs) * time.Millisecond
		sec, err := s.controllerPeerSecurity()
		if err != nil {
			return controller.Config{}, err
		}
		cfg.PeerSecurity, cfg.SuperUsers = sec, s.cfg.Security.SuperUsers
	}
	return cfg, nil
}

// startBroker registers this node with the active controller and waits to
// be unfenced. A single node gives itself 30 seconds; a cluster node waits
// for its quorum as long as the server runs.
func (s *Server) startBroker(ctx context.Context, ctrl *controller.Controller) (*controller.BrokerSession, error) {
	host, port, err := s.advertised()
	if err != nil {
		return nil, err
	}
	endpoints, err := s.endpoints()
	if err != nil {
		return nil, err
	}
	b := controller.Broker{NodeID: s.cfg.NodeID, Host: host, Port: port, Rack: s.cfg.Rack, Endpoints: endpoints,
		// The epoch of the last clean shutdown, or -1 after a crash: the
		// controller then takes this broker out of every ISR and ELR.
		PreviousEpoch: log.CleanShutdownEpoch(s.cfg.DataDir, log.Options{FS: s.opts.LogFS})}
	if s.cfg.MultiNode() {
		b.ControllerAddress = s.controllerAdvertised()
		s.logger.Info("registering with the controller quorum", "node_id", s.cfg.NodeID, "voters", s.cfg.Cluster.Voters)
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	sess, err := ctrl.StartBroker(ctx, b, time.Duration(s.cfg.Cluster.BrokerHeartbeatIntervalMs)*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("server: register broker: %w", err)
	}
	return sess, nil
}

// controlledShutdown asks the controller to move this broker's leaderships
// away before it stops (bounded by cluster.controlled_shutdown_timeout_ms).
func (s *Server) controlledShutdown(sess *controller.BrokerSession) {
	timeout := time.Duration(s.cfg.Cluster.ControlledShutdownTimeoutMs) * time.Millisecond
	if timeout <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := sess.Shutdown(ctx); err != nil {
		s.logger.Warn("controlled shutdown incomplete; stopping anyway", "err", err)
	}
}
