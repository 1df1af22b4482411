package controller

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// NewTCPTransport listens on bind (host:port) for raft traffic between
// controller nodes and tells peers to dial advertise (empty means bind,
// which then must not be a wildcard address). Pass the result as
// Config.Transport; raft closes it when the controller closes.
func NewTCPTransport(bind, advertise string, logger *slog.Logger) (raft.Transport, error) {
	if logger == nil {
		logger = slog.Default()
	}
	var adv net.Addr
	if advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", advertise)
		if err != nil {
			return nil, fmt.Errorf("controller: advertised address %q: %w", advertise, err)
		}
		adv = a
	}
	t, err := raft.NewTCPTransportWithLogger(bind, adv, 3, 10*time.Second, newRaftLogger(logger.With("component", "raft-transport")))
	if err != nil {
		return nil, fmt.Errorf("controller: raft transport on %q: %w", bind, err)
	}
	return t, nil
}
