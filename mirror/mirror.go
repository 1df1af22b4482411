package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RunOptions carries what a mirror needs from its caller.
type RunOptions struct {
	// Name labels metrics and logs; default "SOURCE->TARGET".
	Name   string
	Logger *slog.Logger
	Now    func() time.Time
	// Registerer receives the mirror's metrics; nil keeps them private.
	Registerer prometheus.Registerer
	// RetryBackoff is the pause before a failed session starts again.
	RetryBackoff time.Duration
	// After returns a channel that delivers after d (time.After by
	// default); tests inject it with Now.
	After func(d time.Duration) <-chan time.Time
}

// Mirror replicates selected topics and group offsets from a source cluster
// to a target cluster until its context ends.
type Mirror struct {
	cfg  Config
	opts RunOptions
	pol  policy
	met  *metrics
	log  *slog.Logger

	// mu guards parts, skipped and lastErr. Each partitionState has its
	// own lock for its offsets.
	mu      sync.Mutex
	parts   map[topicPartition]*partitionState
	skipped map[string]string
	// untranslated are the source topics copied through the partitioner,
	// with the reason their group offsets are not translated.
	untranslated map[string]string
	lastErr      error
	lastErrAt    time.Time
}

type topicPartition struct {
	topic     string
	partition int32
}

// Partition states.
const (
	StateResuming  = "resuming"
	StateMirroring = "mirroring"
	// StateFailing is a partition that a persistent error (the target
	// refusing a record as too large, authorization, a missing topic, a
	// source gap under on_source_gap = "stop") stopped. Status shows the
	// error; retriable causes are retried with exponential backoff.
	StateFailing  = "failing"
	StatePromoted = "promoted"
	// StateDeleted is a partition whose source topic was deleted, and its
	// target topic with it (topics.sync_deletions).
	StateDeleted = "deleted"
)

// partitionState is what the mirror knows of one source partition.
type partitionState struct {
	topic, target string
	partition     int32
	met           partitionMetrics

	// mu guards everything below; it is held briefly by the replicator,
	// the checkpointer and Status.
	mu sync.Mutex
	// offsets translates in copy mode; in link mode only srcNext is used
	// (target offsets equal source offsets).
	offsets offsetMap
	// fetchNext is the offset after the last record handed to the target
	// (acknowledged or not).
	fetchNext int64
	sourceEnd int64
	records   int64
	state     string
	err       error
	// lastSync is when the last offset sync was written and syncedUp its
	// upstream offset.
	lastSync time.Time
	syncedUp int64
	// spread is the target topic's partition count when records are
	// placed through the default partitioner (repartition.go), else 0;
	// acks then tracks which produced records are acknowledged.
	spread int32
	acks   ackTracker

	// lastWrite is when the target last acknowledged a record of the
	// partition; failedAt when it last failed, failures the failures
	// since the last successful write, and retryAt when a failing
	// partition is started again (zero: not retried, the error would
	// recur).
	lastWrite, failedAt, retryAt time.Time
	failures                     int
	// tooLarge counts records skipped as larger than the target accepts
	// (on_record_too_large = "skip"); skips are their source offsets not
	// yet passed by the acknowledged position.
	tooLarge int64
	skips    []int64
	// inflight counts records handed to the producer and not yet
	// acknowledged or failed; a failing partition restarts at zero.
	inflight int
}

// New checks cfg and builds a mirror; nothing connects until Run.
func New(cfg Config, opts RunOptions) (*Mirror, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = cfg.Source.Name + "->" + cfg.Target.Name
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.After == nil {
		opts.After = time.After
	}
	if opts.RetryBackoff <= 0 {
		opts.RetryBackoff = 2 * time.Second
	}
	met, err := newMetrics(opts.Name, opts.Registerer)
	if err != nil {
		return nil, err
	}
	return &Mirror{
		cfg: cfg, opts: opts, pol: newPolicy(cfg), met: met,
		log:     opts.Logger.With("mirror", opts.Name),
		parts:   map[topicPartition]*partitionState{},
		skipped: map[string]string{},
	}, nil
}

// Config is the mirror's configuration.
func (m *Mirror) Config() Config { return m.cfg }

// Run mirrors until ctx ends. A session that fails (a cluster unreachable, a
// write refused) is logged and started again after a pause; each session
// resumes every partition from what the target holds, so nothing is lost or
// written twice. Run returns nil when ctx ends.
func (m *Mirror) Run(ctx context.Context) error {
	failures := 0
	for {
		began := m.opts.Now()
		err := m.runSession(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errLimitsChanged) {
			continue // not a failure: the new session batches by the new limits
		}
		// A session that ran a while before failing starts the backoff
		// over; one that fails at once doubles it.
		if m.opts.Now().Sub(began) >= maxRetryBackoff {
			failures = 0
		}
		backoff := retryBackoff(m.opts.RetryBackoff, failures)
		failures++
		m.mu.Lock()
		m.lastErr = err
		m.lastErrAt = m.opts.Now()
		m.mu.Unlock()
		m.log.Error("mirror session failed; restarting", "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-m.opts.After(backoff):
		}
	}
}

func (m *Mirror) runSession(ctx context.Context) error {
	s, err := newSession(ctx, m)
	if err != nil {
		return err
	}
	defer s.close()
	err = s.run(ctx)
	if err == nil && ctx.Err() == nil {
		err = errors.New("mirror: session ended")
	}
	return err
}

// state returns (creating) the state of a source partition.
func (m *Mirror) state(topic string, p int32) *partitionState {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := topicPartition{topic, p}
	st, ok := m.parts[k]
	if !ok {
		st = &partitionState{topic: topic, target: m.pol.TargetTopic(topic), partition: p,
			met: m.met.partition(topic, p), state: StateResuming, syncedUp: -2}
		m.parts[k] = st
	}
	return st
}

// lookup returns the state of a source partition, if known.
func (m *Mirror) lookup(topic string, p int32) (*partitionState, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.parts[topicPartition{topic, p}]
	return st, ok
}

// translate maps a group's committed source offset to the target.
func (st *partitionState) translate(mode string, committed int64) (int64, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.state != StateMirroring && st.state != StateFailing && st.state != StatePromoted || st.spread > 0 {
		return 0, false
	}
	if mode == ModeLink {
		if committed > st.offsets.srcNext {
			return 0, false
		}
		return committed, true
	}
	return st.offsets.translate(committed)
}

// fail moves the partition to the failing state for good (until the
// mirror restarts): the error would recur on any retry.
func (st *partitionState) fail(err error) { st.failAt(err, time.Time{}, 0) }

// failAt moves the partition to the failing state at now; with a backoff
// base above zero it is retried after base doubled for each failure since
// the last successful write, at most maxRetryBackoff.
func (st *partitionState) failAt(err error, now time.Time, base time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.state != StateFailing {
		st.met.failures.Inc()
		st.met.failing.Set(1)
	}
	st.state, st.err = StateFailing, err
	st.failedAt = now
	st.retryAt = time.Time{}
	if base > 0 {
		st.retryAt = now.Add(retryBackoff(base, st.failures))
	}
	st.failures++
}

// maxRetryBackoff bounds the pause before a failing partition or a failed
// session is retried.
const maxRetryBackoff = time.Minute

// retryBackoff is base doubled n times, at most maxRetryBackoff.
func retryBackoff(base time.Duration, n int) time.Duration {
	d := base
	for i := 0; i < n && d < maxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, maxRetryBackoff)
}

// passSkips moves the position past skipped records it has reached. Called
// with st.mu held.
func (st *partitionState) passSkips() {
	for len(st.skips) > 0 && st.skips[0] <= st.offsets.srcNext {
		if st.skips[0] == st.offsets.srcNext {
			st.offsets.skipTo(st.skips[0] + 1)
		}
		st.skips = st.skips[1:]
	}
	if len(st.skips) == 0 {
		st.skips = nil
	}
}

// wrote records a successful write at now. Called with st.mu held.
func (st *partitionState) wrote(now time.Time) {
	st.lastWrite = now
	st.failures = 0
	st.met.lastWrite.Set(float64(now.UnixMilli()) / 1000)
}

// Status is a snapshot of the mirror for people and tools.
type Status struct {
	Name       string
	Source     string
	Target     string
	Mode       string
	Partitions []PartitionStatus
	// Skipped names source topics that are not mirrored, with the reason.
	Skipped map[string]string
	// Untranslated names source topics copied through the partitioner
	// (partition counts differ), whose group offsets are not translated.
	Untranslated map[string]string
	// LastError is the error that ended the previous session, if any, and
	// LastErrorAt when.
	LastError   string
	LastErrorAt time.Time `json:",omitempty"`
}

// PartitionStatus is one source partition's progress.
type PartitionStatus struct {
	Topic       string
	Partition   int32
	TargetTopic string
	// Position is the next source offset to mirror; SourceEnd the source's
	// high watermark when last seen; Lag their difference.
	Position  int64
	SourceEnd int64
	Lag       int64
	Records   int64
	State     string
	// Error is the partition's last error: why it is failing, or a
	// reported loss (a skipped gap or record) while it goes on.
	Error string
	// FailedAt is when the partition last failed, RetryAt when a failing
	// partition is tried again (zero: not retried, the error would
	// recur), Failures the failures since its last successful write.
	FailedAt time.Time `json:",omitempty"`
	RetryAt  time.Time `json:",omitempty"`
	Failures int       `json:",omitempty"`
	// LastWrite is when the target last acknowledged one of its records.
	LastWrite time.Time `json:",omitempty"`
	// TooLarge counts records skipped as larger than the target accepts.
	TooLarge int64 `json:",omitempty"`
}

// Failing lists the partitions in the failing state.
func (s Status) Failing() []PartitionStatus {
	var out []PartitionStatus
	for _, p := range s.Partitions {
		if p.State == StateFailing {
			out = append(out, p)
		}
	}
	return out
}

// Lag sums the partitions' lag.
func (s Status) Lag() int64 {
	var n int64
	for _, p := range s.Partitions {
		n += p.Lag
	}
	return n
}

// Status reports the mirror's progress.
func (m *Mirror) Status() Status {
	m.mu.Lock()
	out := Status{Name: m.opts.Name, Source: m.cfg.Source.Name, Target: m.cfg.Target.Name, Mode: m.cfg.Mirror.Mode,
		Skipped: make(map[string]string, len(m.skipped)), Untranslated: make(map[string]string, len(m.untranslated))}
	for t, why := range m.skipped {
		out.Skipped[t] = why
	}
	for t, why := range m.untranslated {
		out.Untranslated[t] = why
	}
	if m.lastErr != nil {
		out.LastError = m.lastErr.Error()
		out.LastErrorAt = m.lastErrAt
	}
	parts := make([]*partitionState, 0, len(m.parts))
	for _, st := range m.parts {
		parts = append(parts, st)
	}
	m.mu.Unlock()
	for _, st := range parts {
		st.mu.Lock()
		ps := PartitionStatus{Topic: st.topic, Partition: st.partition, TargetTopic: st.target,
			Position: st.offsets.srcNext, SourceEnd: st.sourceEnd, Records: st.records, State: st.state,
			FailedAt: st.failedAt, RetryAt: st.retryAt, Failures: st.failures, LastWrite: st.lastWrite, TooLarge: st.tooLarge}
		if st.err != nil {
			ps.Error = st.err.Error()
		}
		st.mu.Unlock()
		if ps.SourceEnd > ps.Position {
			ps.Lag = ps.SourceEnd - ps.Position
		}
		out.Partitions = append(out.Partitions, ps)
	}
	sort.Slice(out.Partitions, func(i, j int) bool {
		a, b := out.Partitions[i], out.Partitions[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return out
}

// String is a one-line summary for progress output.
func (s Status) String() string {
	var mirroring, failing int
	var records int64
	for _, p := range s.Partitions {
		records += p.Records
		switch p.State {
		case StateMirroring:
			mirroring++
		case StateFailing:
			failing++
		}
	}
	return fmt.Sprintf("%s: %d partitions mirroring, %d failing, %d records copied, lag %d",
		s.Name, mirroring, failing, records, s.Lag())
}
