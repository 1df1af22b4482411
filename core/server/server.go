package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gregorbroker/gregor/core/api"
	corebroker "github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/httpapi"
	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/telemetry"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// MetadataDirName is where the controller keeps its Raft log and snapshots
// inside data_dir. It holds no dash-number suffix, so it is never mistaken
// for a partition directory.
const MetadataDirName = log.ReservedDirPrefix + "metadata"

// lagSampleInterval is how often each group's lag is sampled for the
// console's lag chart (an hour of history at 360 samples).
const lagSampleInterval = 10 * time.Second

// Options carries what the server needs from its caller.
type Options struct {
	Logger *slog.Logger
	Now    func() time.Time
	// Authenticators offer SASL mechanisms from extensions, by their
	// [extensions.NAME]; a mechanism they list is used when
	// security.sasl_mechanisms names it.
	Authenticators map[string]sdkauth.Authenticator
	// Authorizers are extension authorizers by the name that
	// security.authorizer selects.
	Authorizers map[string]sdkauth.Authorizer
	// Partitioners and RetentionPolicies are the opened partitioner and
	// retention extensions by their [extensions.NAME]; every one broker.toml
	// declares must be here. Topics pick them by name.
	Partitioners      map[string]partitioner.BatchPartitioner
	RetentionPolicies map[string]retention.Policy
	// Interceptors are the opened record interceptors by their
	// [extensions.NAME]; topics pick one with gregor.interceptor.produce or
	// gregor.interceptor.fetch.
	Interceptors map[string]interceptor.Interceptor
	// LogFS is the file system the partition logs live on; nil means the
	// operating system's. It exists for tests and fault-injection builds,
	// which pass a core/log/vfs/errorfs file system to fail writes and
	// fsyncs (see cmd/gregor's errorfs build tag); broker.toml has no key
	// for it.
	LogFS vfs.FS
}

// Server is one Gregor broker.
type Server struct {
	cfg     config.Config
	logger  *slog.Logger
	now     func() time.Time
	meta    metaProperties
	kafkaLn net.Listener
	httpLn  net.Listener
	// ctrlLn is listeners.controller in a multi-node cluster (nil
	// otherwise); the controller owns it once opened.
	ctrlLn net.Listener
	// ctrlRef is the open controller, for the controller plane's SASL
	// credential lookups (nil until Open returns).
	ctrlRef atomic.Pointer[controller.Controller]
	serving atomic.Bool
	opts    Options
	sec     security
	// mirrors are the [mirror.NAME] sections, run with the broker.
	mirrors []mirrorSpec
}

// New checks the configuration, formats or reads the data directory and
// binds the listeners. Nothing is served until Run.
func New(cfg config.Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("server: data_dir: %w", err)
	}
	meta, err := loadOrFormat(cfg.DataDir, cfg.NodeID, clusterIDFor(cfg))
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: opts.Logger, now: opts.Now, meta: meta, opts: opts}
	s.kafkaLn, err = net.Listen("tcp", cfg.Listeners.Kafka)
	if err != nil {
		return nil, fmt.Errorf("server: listeners.kafka: %w", err)
	}
	if err := s.bindExtra(); err != nil {
		s.kafkaLn.Close()
		return nil, err
	}
	if cfg.Listeners.HTTP != "" {
		s.httpLn, err = net.Listen("tcp", cfg.Listeners.HTTP)
		if err != nil {
			s.kafkaLn.Close()
			s.closeExtra()
			return nil, fmt.Errorf("server: listeners.http: %w", err)
		}
	}
	if err := s.bindController(); err != nil {
		s.closeListeners()
		return nil, err
	}
	if err := s.decodeMirrors(); err != nil {
		s.closeListeners()
		return nil, err
	}
	return s, nil
}

// KafkaAddr is the bound address of the Kafka listener.
func (s *Server) KafkaAddr() string { return s.kafkaLn.Addr().String() }

// HTTPAddr is the bound address of the HTTP listener, or "".
func (s *Server) HTTPAddr() string {
	if s.httpLn == nil {
		return ""
	}
	return s.httpLn.Addr().String()
}

// ClusterID is the data directory's cluster id.
func (s *Server) ClusterID() string { return s.meta.ClusterID }

// advertised is the host and port given to clients; a wildcard bind address
// is advertised as the loopback address.
func (s *Server) advertised() (string, int32, error) {
	addr := s.cfg.AdvertisedKafka()
	if s.cfg.Listeners.KafkaAdvertised == "" {
		addr = s.KafkaAddr()
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("server: advertised address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", 0, fmt.Errorf("server: advertised port %q: %w", portStr, err)
	}
	return host, int32(port), nil
}

// logDirOffline runs once when a write or fsync error took the data dir
// offline (Kafka's LogDirFailureChannel): the partitions' waiters answer
// KAFKA_STORAGE_ERROR now, and the heartbeats tell the controller, which
// moves this broker's leaderships to other in-sync replicas and keeps it out
// of every ISR until it restarts.
func (s *Server) logDirOffline(broker *api.Broker, session *controller.BrokerSession, dir string, err error) {
	s.logger.Error("log dir offline: its partitions answer KAFKA_STORAGE_ERROR until the broker restarts",
		"dir", dir, "err", err)
	for _, p := range broker.Partitions.All() {
		p.NotifyOffline()
	}
	if session != nil {
		session.ReportLogDirOffline()
	}
}

// Run serves until ctx is cancelled, then shuts down cleanly: listeners stop,
// follower fetches stop, partitions write producer snapshots, logs are
// flushed and checkpointed (high watermarks included), and the controller
// closes.
func (s *Server) Run(ctx context.Context) (err error) {
	defer s.closeListeners()
	start := s.now()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	ccfg, err := s.controllerConfig()
	if err != nil {
		return err
	}
	ctrl, err := controller.Open(ccfg)
	if err != nil {
		return err
	}
	s.ctrlRef.Store(ctrl)
	defer func() {
		if cerr := ctrl.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if !s.cfg.MultiNode() {
		waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = ctrl.WaitLeader(waitCtx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil // stopped while starting
			}
			return fmt.Errorf("server: metadata quorum: %w", err)
		}
	}
	session, err := s.startBroker(ctx, ctrl)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return err
	}

	done := make(chan struct{})
	hosted := &corebroker.Broker{
		Config:     s.cfg,
		Controller: ctrl,
		Partitions: partition.NewSet(),
		Logger:     s.logger,
		Now:        s.now,
		Done:       done,
	}
	broker := &api.Broker{
		Broker: hosted,
		Telemetry: telemetry.NewStore(telemetry.Config{
			MaxBytes: s.cfg.Telemetry.MaxBytes, MaxSeries: s.cfg.Telemetry.MaxSeries, Now: s.now,
		}),
	}
	logOpts := log.Options{Now: s.now, Logger: s.logger.With("component", "log"), FS: s.opts.LogFS,
		OnOffline: func(dir string, err error) { s.logDirOffline(broker, session, dir, err) }}
	logs, err := log.OpenDir(s.cfg.DataDir, logOpts,
		func(topic string, _ int32) log.Config {
			im := ctrl.Image()
			return hosted.TopicPartitionConfig(im, topic).Log
		})
	if err != nil {
		return err
	}
	broker.Logs = logs
	// The extensions first: security takes its extension authorizer and
	// authenticators from the set.
	if err := s.wireExtensions(broker); err != nil {
		return err
	}
	if err := s.wireSecurity(broker, s.opts); err != nil {
		return err
	}
	defer func() {
		for _, p := range broker.Partitions.All() {
			if perr := p.Close(); perr != nil {
				s.logger.Error("producer snapshot failed", "topic", p.Topic, "partition", p.Index, "err", perr)
			}
		}
		// An offline log dir was reported when it failed; its Close
		// error (no clean-shutdown marker) is expected. The marker
		// records the broker epoch this life ends under.
		logs.SetBrokerEpoch(session.Epoch())
		if cerr := logs.Close(); cerr != nil && err == nil && logs.Offline() == nil {
			err = cerr
		}
	}()
	gcfg := group.ConfigFrom(s.cfg.Groups)
	gcfg.Sync = s.cfg.Log.Durability == config.DurabilityFsync
	broker.Groups = group.New(gcfg, group.Options{
		Logger: s.logger, Topics: broker.GroupTopics,
		GroupConfigs: func(id string) map[string]string {
			return ctrl.Image().Configs[controller.ConfigResource{Type: controller.ResourceGroup, Name: id}]
		},
	})
	broker.ProducerIDs = txn.NewProducerIDs(ctrl, txn.ProducerIDBlock)
	broker.Txns = txn.New(txn.ConfigFrom(s.cfg), txn.Options{
		Now: s.now, Logger: s.logger, AllocateProducerID: broker.AllocateProducerID, WriteMarker: broker.WriteTxnMarker,
	})
	replCtx, replCancel := context.WithCancel(context.Background())
	defer replCancel()
	if err := s.wireReplication(replCtx, broker, ctrl); err != nil {
		return err
	}
	defer broker.Followers.Close()
	defer broker.Peers.Close()
	if err := hosted.Open(ctrl.Image()); err != nil {
		s.logger.Error("some partitions could not be opened", "err", err)
	}
	reg.MustRegister(partition.NewCollector(broker.Partitions).WithNodeID(s.cfg.NodeID), broker.MetricsCollector(), broker.Telemetry)
	if broker.Extensions != nil {
		reg.MustRegister(broker.Extensions)
	}

	var g run.Group
	// The context actor: cancellation stops the group, after a controlled
	// shutdown has moved this broker's leaderships away.
	{
		gctx, gcancel := context.WithCancel(ctx)
		g.Add(func() error {
			<-gctx.Done()
			if ctx.Err() != nil {
				s.controlledShutdown(session)
			}
			return nil
		}, func(error) { gcancel() })
	}
	// A failed write to the metadata log stops the node, as Kafka's
	// controller does: it can neither vote nor follow the log any more.
	{
		stop := make(chan struct{})
		g.Add(func() error {
			select {
			case <-ctrl.MetadataLogFailed():
				err := ctrl.MetadataLogErr()
				s.logger.Error("metadata log write failed; stopping the node", "err", err)
				return fmt.Errorf("server: %w", err)
			case <-stop:
				return nil
			}
		}, func(error) { close(stop) })
	}
	// Heartbeats to the active controller.
	{
		hctx, hcancel := context.WithCancel(context.Background())
		g.Add(func() error {
			return session.Run(hctx)
		}, func(error) { hcancel() })
	}
	// The Kafka listeners; the first to stop ends the broker's long polls.
	{
		metrics := protocol.NewMetrics(reg)
		var closeDone sync.Once
		for _, l := range s.listeners() {
			srv, err := s.protocolServer(l, broker, metrics)
			if err != nil {
				return err
			}
			sctx, scancel := context.WithCancel(context.Background())
			g.Add(func() error {
				return srv.Serve(sctx, l.ln)
			}, func(error) {
				closeDone.Do(func() { close(done) })
				scancel()
			})
		}
	}
	// The [mirror.NAME] mirrors; the admin API shows their links.
	mirrorLinks, err := s.addMirrors(&g, reg)
	if err != nil {
		return err
	}
	// The HTTP listener.
	if s.httpLn != nil {
		lagHistory := httpapi.NewLagHistory(0)
		admin := broker.AdminView()
		producer := &httpapi.BrokerProducer{Broker: hosted, Authorize: broker.AuthorizeHTTPWrite, ErrorCode: api.ErrorCode}
		hs := &http.Server{
			Handler: httpapi.NewHandler(httpapi.Options{Gatherer: reg, Health: s.health, Producer: producer,
				MaxBodyBytes: int64(s.cfg.Limits.MaxRequestBytes), Admin: admin, LagHistory: lagHistory,
				Auth: broker.HTTPAuthenticator(), RequireAuth: httpapi.RequiresAuth(s.cfg), Mirrors: mirrorLinks}),
			ReadHeaderTimeout: 10 * time.Second,
		}
		// The lag sampler feeds the console's lag chart.
		lctx, lcancel := context.WithCancel(context.Background())
		g.Add(func() error {
			t := time.NewTicker(lagSampleInterval)
			defer t.Stop()
			httpapi.SampleLag(lctx, admin, lagHistory, t.C)
			return nil
		}, func(error) { lcancel() })
		g.Add(func() error {
			if err := hs.Serve(s.httpLn); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("server: http: %w", err)
			}
			return nil
		}, func(error) {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hs.Shutdown(sctx)
		})
	}
	// Metadata changes: open, reconfigure and delete partitions, on the
	// one goroutine that does.
	{
		actx, acancel := context.WithCancel(context.Background())
		g.Add(func() error {
			return hosted.Run(actx, ctrl)
		}, func(error) { acancel() })
	}
	// ISR changes for the partitions led here.
	if broker.ISR != nil {
		ictx, icancel := context.WithCancel(context.Background())
		g.Add(func() error {
			t := time.NewTicker(isrConfig(s.cfg).LagTimeMax / 2)
			defer t.Stop()
			broker.ISR.Run(ictx, t.C)
			return nil
		}, func(error) { icancel() })
	}
	// Background log work: retention, checkpoints, producer snapshots and,
	// in page_cache mode, the periodic flush.
	{
		stop := make(chan struct{})
		g.Add(func() error {
			s.maintain(broker, logs, stop)
			return nil
		}, func(error) { close(stop) })
	}
	// The log cleaner: compaction of topics with cleanup.policy compact.
	{
		stop := make(chan struct{})
		g.Add(func() error {
			s.runCleaner(broker, logs, stop)
			return nil
		}, func(error) { close(stop) })
	}

	// The group coordinator: offset expiry; when stopped it resigns every
	// group, answering members that wait in JoinGroup or SyncGroup.
	{
		gctx, gcancel := context.WithCancel(context.Background())
		g.Add(func() error {
			return broker.Groups.Run(gctx)
		}, func(error) { gcancel() })
	}

	// The transaction coordinator: aborts transactions past their timeout
	// and retries owed markers; when stopped it resigns every partition.
	{
		tctx, tcancel := context.WithCancel(context.Background())
		g.Add(func() error {
			return broker.Txns.Run(tctx)
		}, func(error) { tcancel() })
	}

	s.serving.Store(true)
	s.logger.Info("gregor serving", "kafka", s.KafkaAddr(), "http", s.HTTPAddr(), "node_id", s.cfg.NodeID,
		"cluster_id", s.meta.ClusterID, "data_dir", s.cfg.DataDir, "durability", s.cfg.Log.Durability,
		"startup", s.now().Sub(start).Round(time.Millisecond))
	err = g.Run()
	s.serving.Store(false)
	s.logger.Info("gregor stopping")
	return err
}

func (s *Server) health() error {
	if !s.serving.Load() {
		return errors.New("not serving")
	}
	return nil
}

func (s *Server) closeListeners() {
	s.kafkaLn.Close()
	if s.ctrlLn != nil {
		s.ctrlLn.Close()
	}
	s.closeExtra()
	if s.httpLn != nil {
		s.httpLn.Close()
	}
}

// maintain runs the periodic log work until stop is closed.
func (s *Server) maintain(b *api.Broker, logs *log.Dir, stop <-chan struct{}) {
	retention := time.NewTicker(time.Duration(s.cfg.Log.RetentionCheckIntervalMs) * time.Millisecond)
	defer retention.Stop()
	checkpoint := time.NewTicker(time.Duration(s.cfg.Log.FlushOffsetCheckpointIntervalMs) * time.Millisecond)
	defer checkpoint.Stop()
	// High watermarks are written more often than the other checkpoints
	// (Kafka's replica.high.watermark.checkpoint.interval.ms): what a
	// restarted replica may show consumers is bounded by them.
	hwCheckpoint := time.NewTicker(time.Duration(s.cfg.Replication.ReplicaHighWatermarkCheckpointIntervalMs) * time.Millisecond)
	defer hwCheckpoint.Stop()
	// The flush scheduler (Kafka's log.flush.scheduler.interval.ms) fsyncs
	// logs whose topic's flush.ms passed since their oldest unflushed append;
	// a log without flush.ms costs a tick one atomic load.
	flush := time.NewTicker(time.Duration(s.cfg.Log.FlushSchedulerIntervalMs) * time.Millisecond)
	defer flush.Stop()
	for {
		select {
		case <-stop:
			return
		case <-retention.C:
			idle := time.Duration(s.cfg.Transactions.ProducerIDExpirationMs) * time.Millisecond
			for _, p := range b.Partitions.All() {
				s.retain(b, p)
				p.ExpireProducers(idle)
			}
		case <-checkpoint.C:
			if logs.Offline() != nil {
				break // reported once when the dir failed; nothing more is written there
			}
			for _, p := range b.Partitions.All() {
				if err := p.Snapshot(); err != nil {
					s.logger.Error("producer snapshot failed", "topic", p.Topic, "partition", p.Index, "err", err)
				}
			}
			if err := logs.Checkpoint(); err != nil {
				s.logger.Error("checkpoint failed", "err", err)
			}
		case <-hwCheckpoint.C:
			if logs.Offline() != nil {
				break
			}
			if err := logs.CheckpointHighWatermarks(); err != nil {
				s.logger.Error("high watermark checkpoint failed", "err", err)
			}
		case now := <-flush.C:
			if logs.Offline() != nil {
				break
			}
			for _, p := range b.Partitions.All() {
				if _, err := p.FlushIfDue(now); err != nil {
					s.logger.Error("flush failed", "topic", p.Topic, "partition", p.Index, "err", err)
				}
				// Rolled segments reach the disk and the recovery point
				// follows, whatever the durability, so that recovery after a
				// crash verifies the active segments only.
				if err := p.FlushRolled(); err != nil {
					s.logger.Error("flush of rolled segments failed", "topic", p.Topic, "partition", p.Index, "err", err)
				}
			}
		}
	}
}
