package extension

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gregorbroker/gregor/core/config"
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

// Set holds the opened partitioners and retention policies by name. It is
// safe for concurrent use; its content does not change after NewSet.
type Set struct {
	cfg          *config.Config
	partitioners map[string]*Partitioner
	policies     map[string]retention.Policy
	interceptors map[string]*Interceptor
	builtin      *Partitioner
	logger       *slog.Logger
	stats        []*Stats // one per declared partitioner and retention policy
}

// NewSet checks that every partitioner and retention extension cfg declares
// was opened, and wraps each with its fallback rule. Either map may be nil
// when none of its kind is declared. NewSetWith adds interceptors.
func NewSet(cfg *config.Config, partitioners map[string]partitioner.BatchPartitioner, policies map[string]retention.Policy, logger *slog.Logger) (*Set, error) {
	return NewSetWith(cfg, partitioners, policies, nil, logger)
}

// NewSetWith is NewSet with the opened interceptors, which every
// interceptor extension cfg declares must be among.
func NewSetWith(cfg *config.Config, partitioners map[string]partitioner.BatchPartitioner, policies map[string]retention.Policy,
	interceptors map[string]interceptor.Interceptor, logger *slog.Logger) (*Set, error) {
	if logger == nil {
		logger = slog.Default()
	}
	s := &Set{
		cfg:          cfg,
		partitioners: map[string]*Partitioner{},
		policies:     map[string]retention.Policy{},
		interceptors: map[string]*Interceptor{},
		builtin:      &Partitioner{Name: config.BuiltinPartitioner, impl: &lockedMurmur2{}},
		logger:       logger,
	}
	names := make([]string, 0, len(cfg.Extensions))
	for n := range cfg.Extensions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		decl := cfg.Extensions[name]
		switch decl.Kind {
		case config.KindPartitioner:
			impl, ok := partitioners[name]
			if !ok || impl == nil {
				return nil, fmt.Errorf("extension: partitioner %s is declared but was not opened", name)
			}
			st := &Stats{Name: name, Kind: decl.Kind}
			s.stats = append(s.stats, st)
			p := &Partitioner{Name: name, impl: impl, logger: logger.With("extension", name), stats: st}
			if decl.EffectiveFallback() == config.FallbackBuiltin {
				p.fallback = s.builtin
			}
			s.partitioners[name] = p
		case config.KindRetention:
			impl, ok := policies[name]
			if !ok || impl == nil {
				return nil, fmt.Errorf("extension: retention policy %s is declared but was not opened", name)
			}
			st := &Stats{Name: name, Kind: decl.Kind}
			s.stats = append(s.stats, st)
			s.policies[name] = countPolicy(impl, st)
		case config.KindInterceptor:
			impl, ok := interceptors[name]
			if !ok || impl == nil {
				return nil, fmt.Errorf("extension: interceptor %s is declared but was not opened", name)
			}
			st := &Stats{Name: name, Kind: decl.Kind}
			s.stats = append(s.stats, st)
			s.interceptors[name] = newInterceptor(name, decl, impl, logger.With("extension", name), st)
		}
	}
	return s, nil
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
// retention. fallback says what applies when the policy fails.
func (s *Set) TopicRetention(configs map[string]string) (name string, p retention.Policy, fallback string, ok bool, err error) {
	name, decl, ok, err := s.cfg.ExtensionFor(ConfigRetention, configs[ConfigRetention], config.KindRetention, config.BuiltinRetention)
	if err != nil || !ok {
		return "", nil, "", false, err
	}
	return name, s.policies[name], decl.EffectiveFallback(), true, nil
}

// Partitioner is a named partitioner with its fallback rule applied. It is
// safe for concurrent use.
type Partitioner struct {
	Name     string
	impl     partitioner.BatchPartitioner
	fallback *Partitioner // nil: a failure fails the call
	logger   *slog.Logger
	stats    *Stats       // nil for the built-in
	lastLog  atomic.Int64 // unix nanos of the last fallback warning
}

// PartitionBatch implements partitioner.BatchPartitioner.
func (p *Partitioner) PartitionBatch(records []partitioner.Record, numPartitions int32, out []int32) error {
	var start time.Time
	if p.stats != nil {
		start = time.Now()
	}
	err := p.impl.PartitionBatch(records, numPartitions, out)
	if p.stats != nil {
		p.stats.Observe(time.Since(start), err)
	}
	if err == nil {
		return nil
	}
	err = fmt.Errorf("extension: partitioner %s: %w", p.Name, err)
	if p.fallback == nil {
		return err
	}
	if p.stats != nil {
		p.stats.Fallback()
	}
	// At most one warning a second: a broken extension under load must
	// not flood the log.
	now := time.Now().UnixNano()
	if last := p.lastLog.Load(); now-last > int64(time.Second) && p.lastLog.CompareAndSwap(last, now) {
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
