package server

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/api"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/replication"
)

// alterPartitioner is the controller's ISR change (Kafka's AlterPartition).
type alterPartitioner interface {
	AlterPartition(ctx context.Context, topic string, partition, leaderEpoch, partitionEpoch int32, isr []int32) (controller.Partition, error)
}

// wireReplication builds the follower fetchers and, when the controller
// takes ISR changes, the ISR decisions for partitions led here.
func (s *Server) wireReplication(ctx context.Context, b *api.Broker, ctrl *controller.Controller) error {
	// The replication throttle: limits and throttled replicas come from
	// the metadata image (core/broker applies it), the clock from the server.
	th, err := replication.NewThrottle(replication.DefaultQuotaConfig(), s.now)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	b.Throttle = th
	fcfg := fetcherConfig(s.cfg)
	fcfg.Quota = th.Follower
	// Followers dial the leaders' inter-broker listener with this
	// broker's own credentials for it.
	opts, err := s.interBrokerOpts()
	if err != nil {
		return err
	}
	fs, err := replication.NewFollowers(ctx, fcfg, replication.KgoDialer("gregor-replica-"+strconv.Itoa(int(s.cfg.NodeID)), opts...),
		s.now, s.logger)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	b.Followers = fs
	// Transaction markers and verifications go to other brokers over the
	// same listener with the same credentials, on clients of their own.
	b.Peers = replication.NewPeers(replication.KgoDialer("gregor-broker-"+strconv.Itoa(int(s.cfg.NodeID)),
		append([]kgo.Opt{kgo.DialTimeout(peerTimeout)}, opts...)...), peerTimeout)
	ap, ok := any(ctrl).(alterPartitioner)
	if !ok {
		return nil
	}
	alter := replication.AlterFunc(func(ctx context.Context, topic string, partition, leaderEpoch, partitionEpoch int32, isr []int32) (replication.Committed, error) {
		p, err := ap.AlterPartition(ctx, topic, partition, leaderEpoch, partitionEpoch, isr)
		if err != nil {
			return replication.Committed{}, err
		}
		return replication.Committed{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
			Replicas: p.Replicas, ISR: p.ISR}, nil
	})
	isr, err := replication.NewISR(isrConfig(s.cfg), b.Partitions, alter, s.now, s.logger.With("component", "isr"))
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	b.ISR = isr
	return nil
}

// peerTimeout bounds a transaction marker or verification sent to another
// broker; the coordinator retries a marker that timed out, a producer a
// verification.
const peerTimeout = 5 * time.Second

// fetcherConfig is the follower fetch settings of [replication].
func fetcherConfig(cfg config.Config) replication.FetcherConfig {
	r := cfg.Replication
	fcfg := replication.DefaultFetcherConfig(cfg.NodeID)
	fcfg.MaxWait = time.Duration(r.ReplicaFetchWaitMaxMs) * time.Millisecond
	fcfg.MinBytes = r.ReplicaFetchMinBytes
	fcfg.MaxBytes = r.ReplicaFetchResponseMaxBytes
	fcfg.PartitionMaxBytes = r.ReplicaFetchMaxBytes
	fcfg.Backoff = time.Duration(r.ReplicaFetchBackoffMs) * time.Millisecond
	fcfg.Sync = cfg.Log.Durability == config.DurabilityFsync
	return fcfg
}

// isrConfig is the ISR settings of [replication].
func isrConfig(cfg config.Config) replication.ISRConfig {
	icfg := replication.DefaultISRConfig()
	icfg.LagTimeMax = time.Duration(cfg.Replication.ReplicaLagTimeMaxMs) * time.Millisecond
	return icfg
}
