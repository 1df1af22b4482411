package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/gregorbroker/gregor/core/config"
)

// startTestCluster runs n nodes in this process, every one a controller
// voter and a broker on loopback, with short sessions and fetch waits;
// tune adjusts each node's config before it starts. The nodes stop when
// the test ends (their logs are printed if it failed).
func startTestCluster(t *testing.T, n int32, tune func(id int32, cfg *config.Config)) map[int32]*Server {
	t.Helper()
	return startTestClusterOpts(t, n, tune, nil)
}

// startTestClusterOpts is startTestCluster with each node's Options (a
// test file system, say) adjusted by opts; its Logger is always set here.
func startTestClusterOpts(t *testing.T, n int32, tune func(id int32, cfg *config.Config), opts func(id int32, o *Options)) map[int32]*Server {
	t.Helper()
	ctrl, dirs := map[int32]string{}, map[int32]string{}
	var voters []string
	for id := int32(1); id <= n; id++ {
		// Made before the cleanup below is registered, so that they are
		// removed after the nodes have stopped.
		dirs[id] = t.TempDir()
		ctrl[id] = freeAddr(t)
		voters = append(voters, fmt.Sprintf("%d@%s", id, ctrl[id]))
	}
	logs := &lockedLog{}
	servers := map[int32]*Server{}
	done := make(chan error, n)
	runCtx, stop := context.WithCancel(context.Background())
	t.Cleanup(func() {
		stop()
		for range servers {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("run: %v", err)
			}
		}
		if t.Failed() {
			t.Logf("node logs:\n%s", logs)
		}
	})
	for id := int32(1); id <= n; id++ {
		cfg := config.Default()
		cfg.NodeID = id
		cfg.DataDir = dirs[id]
		cfg.Listeners.Kafka = "127.0.0.1:0"
		cfg.Listeners.HTTP = ""
		cfg.Listeners.Controller = ctrl[id]
		cfg.Cluster.Voters = voters
		cfg.Cluster.BrokerSessionTimeoutMs = 3000
		cfg.Cluster.BrokerHeartbeatIntervalMs = 200
		cfg.Cluster.ControlledShutdownTimeoutMs = 2000 // all nodes stop at once: the last one has no quorum
		cfg.Replication.ReplicaFetchWaitMaxMs = 100
		cfg.Replication.ReplicaFetchBackoffMs = 100
		cfg.Topics.AutoCreate = false
		if tune != nil {
			tune(id, &cfg)
		}
		o := Options{}
		if opts != nil {
			opts(id, &o)
		}
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})).With("node", id)
		srv, err := New(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		servers[id] = srv
		go func() { done <- srv.Run(runCtx) }()
	}
	return servers
}
