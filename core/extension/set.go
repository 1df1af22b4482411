package extension

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// Topic config names.
const (
	ConfigPartitioner = "gregor.partitioner"
	ConfigEnforce     = "gregor.partitioner.enforce"
	ConfigRetention   = "gregor.retention.policy"
)

// Set holds the opened extensions by name, each wrapped with its fallback,
// failure policy, time limit and statistics. It is safe for concurrent use;
// its content does not change after New.
type Set struct {
	cfg            *config.Config
	names          []string // of the declared extensions, sorted
	partitioners   map[string]*Partitioner
	policies       map[string]*Retention
	interceptors   map[string]*Interceptor
	authorizers    map[string]*Authorizer
	authenticators map[string]*Authenticator
	builtin        *Partitioner
	logger         *slog.Logger
	stats          []*Stats // one per declared extension
}

// Opened is what the host loader opened for the [extensions] of broker.toml,
// by name: WebAssembly modules and plugin processes alike, seen only
// through the sdk contracts. A map may be nil when none of its kind is
// declared.
type Opened struct {
	Partitioners   map[string]partitioner.BatchPartitioner
	Retention      map[string]retention.Policy
	Interceptors   map[string]interceptor.Interceptor
	Authorizers    map[string]auth.Authorizer
	Authenticators map[string]auth.Authenticator
	// Now is the clock of the authorizers' decision caches; nil means
	// time.Now.
	Now func() time.Time
}

// NewSet is New with partitioners and retention policies only.
func NewSet(cfg *config.Config, partitioners map[string]partitioner.BatchPartitioner, policies map[string]retention.Policy, logger *slog.Logger) (*Set, error) {
	return New(cfg, Opened{Partitioners: partitioners, Retention: policies}, logger)
}

// NewSetWith is NewSet with the opened interceptors.
func NewSetWith(cfg *config.Config, partitioners map[string]partitioner.BatchPartitioner, policies map[string]retention.Policy,
	interceptors map[string]interceptor.Interceptor, logger *slog.Logger) (*Set, error) {
	return New(cfg, Opened{Partitioners: partitioners, Retention: policies, Interceptors: interceptors}, logger)
}

// New checks that every extension cfg declares was opened, and wraps each
// with its declaration's rules: the fallback (builtin or reject), the
// failure policy, the time limit (CallTimeout) and the statistics.
func New(cfg *config.Config, o Opened, logger *slog.Logger) (*Set, error) {
	if logger == nil {
		logger = slog.Default()
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	s := &Set{
		cfg:            cfg,
		partitioners:   map[string]*Partitioner{},
		policies:       map[string]*Retention{},
		interceptors:   map[string]*Interceptor{},
		authorizers:    map[string]*Authorizer{},
		authenticators: map[string]*Authenticator{},
		builtin:        &Partitioner{Name: config.BuiltinPartitioner, impl: &lockedMurmur2{}},
		logger:         logger,
	}
	for n := range cfg.Extensions {
		s.names = append(s.names, n)
	}
	sort.Strings(s.names)
	for _, name := range s.names {
		decl := cfg.Extensions[name]
		log := logger.With("extension", name)
		st := &Stats{Name: name, Kind: decl.Kind}
		timeout := CallTimeout(decl)
		missing := func(impl any, ok bool) error {
			if ok && impl != nil {
				s.stats = append(s.stats, st)
				return nil
			}
			return fmt.Errorf("extension: %s %s is declared but was not opened", kindWords(decl.Kind), name)
		}
		switch decl.Kind {
		case config.KindPartitioner:
			impl, ok := o.Partitioners[name]
			if err := missing(impl, ok); err != nil {
				return nil, err
			}
			p := &Partitioner{Name: name, impl: impl, timeout: timeout, logger: log, stats: st}
			if cp, ok := impl.(contextPartitioner); ok {
				p.withCtx = cp
			}
			if decl.EffectiveFallback() == config.FallbackBuiltin {
				p.fallback = s.builtin
			}
			s.partitioners[name] = p
		case config.KindRetention:
			impl, ok := o.Retention[name]
			if err := missing(impl, ok); err != nil {
				return nil, err
			}
			s.policies[name] = &Retention{Name: name, policy: countPolicy(impl, st), builtin: decl.EffectiveFallback() == config.FallbackBuiltin,
				timeout: timeout, logger: log, stats: st}
		case config.KindInterceptor:
			impl, ok := o.Interceptors[name]
			if err := missing(impl, ok); err != nil {
				return nil, err
			}
			s.interceptors[name] = newInterceptor(name, decl, impl, log, st)
		case config.KindAuthorizer:
			impl, ok := o.Authorizers[name]
			if err := missing(impl, ok); err != nil {
				return nil, err
			}
			s.authorizers[name] = newAuthorizer(name, decl, impl, now, log, st)
		case config.KindAuthenticator:
			impl, ok := o.Authenticators[name]
			if err := missing(impl, ok); err != nil {
				return nil, err
			}
			s.authenticators[name] = &Authenticator{Name: name, impl: impl, timeout: timeout, logger: log, stats: st}
		}
	}
	return s, nil
}

// kindWords names a kind in an error message.
func kindWords(kind string) string {
	if kind == config.KindRetention {
		return "retention policy"
	}
	return kind
}

// Builtin is the broker's own partitioner: Kafka's murmur2 placement, null
// keys round-robin.
func (s *Set) Builtin() *Partitioner { return s.builtin }

// TopicPartitioner is the partitioner a topic picks with gregor.partitioner
// in configs (its explicit overrides; absent means the built-in). A name
// broker.toml does not declare is an error naming the config.
func (s *Set) TopicPartitioner(configs map[string]string) (*Partitioner, error) {
	name, _, ok, err := s.cfg.ExtensionFor(ConfigPartitioner, configs[ConfigPartitioner], config.KindPartitioner, config.BuiltinPartitioner)
	if err != nil {
		return nil, err
	}
	if !ok {
		return s.builtin, nil
	}
	return s.partitioners[name], nil
}

// Enforced reports whether configs ask for the placement check.
func Enforced(configs map[string]string) bool {
	v, ok := configs[ConfigEnforce]
	return ok && (v == "true" || v == "TRUE" || v == "True")
}

// TopicRetention is the retention policy a topic picks with
// gregor.retention.policy: ok is false for the built-in time and size
// retention. fallback says what applies when the policy fails. Retain runs
// a round with that fallback applied.
func (s *Set) TopicRetention(configs map[string]string) (name string, p retention.Policy, fallback string, ok bool, err error) {
	name, decl, ok, err := s.cfg.ExtensionFor(ConfigRetention, configs[ConfigRetention], config.KindRetention, config.BuiltinRetention)
	if err != nil || !ok {
		return "", nil, "", false, err
	}
	return name, s.policies[name].policy, decl.EffectiveFallback(), true, nil
}

// contextPartitioner is a partitioner whose calls take a deadline (both
// hosts' partitioners are).
type contextPartitioner interface {
	PartitionBatchContext(ctx context.Context, records []partitioner.Record, numPartitions int32, out []int32) error
}

// Partitioner is a named partitioner with its fallback rule, time limit
// and statistics applied. It is safe for concurrent use.
type Partitioner struct {
	Name     string
	impl     partitioner.BatchPartitioner
	withCtx  contextPartitioner // impl, when its calls take a deadline
	timeout  time.Duration      // 0: none
	fallback *Partitioner       // nil: a failure fails the call
	logger   *slog.Logger
	stats    *Stats // nil for the built-in
	warn     warnEvery
}

// PartitionBatch implements partitioner.BatchPartitioner.
func (p *Partitioner) PartitionBatch(records []partitioner.Record, numPartitions int32, out []int32) error {
	if p.stats == nil { // the built-in
		return p.impl.PartitionBatch(records, numPartitions, out)
	}
	start := time.Now()
	var err error
	if p.withCtx != nil && p.timeout > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
		err = p.withCtx.PartitionBatchContext(ctx, records, numPartitions, out)
		cancel()
	} else {
		err = p.impl.PartitionBatch(records, numPartitions, out)
	}
	p.stats.Observe(time.Since(start), err)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("extension: partitioner %s: %w", p.Name, err)
	if p.fallback == nil {
		if p.warn.allow() {
			p.logger.Warn("partitioner failed; fallback reject fails the batch", "err", err)
		}
		return err
	}
	p.stats.Fallback()
	if p.warn.allow() {
		p.logger.Warn("partitioner failed; placing with the built-in murmur2", "err", err)
	}
	return p.fallback.PartitionBatch(records, numPartitions, out)
}

// lockedMurmur2 shares one round-robin position between goroutines.
type lockedMurmur2 struct {
	mu sync.Mutex // guards m
	m  partitioner.Murmur2Batch
}

func (l *lockedMurmur2) PartitionBatch(records []partitioner.Record, numPartitions int32, out []int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.PartitionBatch(records, numPartitions, out)
}

// murmur2 is the built-in partitioner for brokers without an extension set.
var murmur2 = &Partitioner{Name: config.BuiltinPartitioner, impl: &lockedMurmur2{}}

// Murmur2 is the built-in partitioner (Kafka's murmur2 placement, null keys
// round-robin), safe for concurrent use.
func Murmur2() *Partitioner { return murmur2 }
