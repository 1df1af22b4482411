package extension

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/sdk/interceptor"
)

// ConfigInterceptProduce is the topic config naming a topic's produce
// interceptor ("none" or absent: no interceptor).
const ConfigInterceptProduce = "gregor.interceptor.produce"

// ErrInterceptFailed is wrapped when an interceptor failed (an error, a
// timeout, an unusable answer) and its on_error policy is reject.
var ErrInterceptFailed = errors.New("interceptor failed")

// Interceptor is a named produce interceptor with its on_error policy,
// time limit and statistics applied. It is safe for concurrent use.
type Interceptor struct {
	Name    string
	impl    interceptor.Interceptor
	accept  bool          // on_error = "accept"
	timeout time.Duration // 0: none (a trusted module)
	logger  *slog.Logger
	stats   *Stats
	warn    warnEvery
}

// Intercept asks the interceptor about one produced batch. A failed call
// follows on_error: accept answers Accept (and counts a fallback), reject
// returns an error wrapping ErrInterceptFailed. A decision it returns
// passed interceptor.Check for the batch.
func (ic *Interceptor) Intercept(ctx context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
	return ic.intercept(ctx, b, false)
}

func (ic *Interceptor) intercept(ctx context.Context, b *interceptor.Batch, fetch bool) (interceptor.Decision, error) {
	ctx, cancel := withTimeout(ctx, ic.timeout)
	defer cancel()
	start := time.Now()
	d, err := ic.impl.InterceptProduce(ctx, b)
	if err == nil {
		err = interceptor.Check(&d, len(b.Records))
	}
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("no answer within %v: %w", ic.timeout, ctx.Err())
	}
	ic.stats.Observe(time.Since(start), err)
	if err == nil {
		return d, nil
	}
	err = fmt.Errorf("extension: interceptor %s: %w", ic.Name, err)
	warn := ic.warn.allow()
	if ic.accept {
		ic.stats.Fallback()
		if warn && fetch {
			ic.logger.Warn("fetch interceptor failed; on_error = accept returns the batch as stored", "topic", b.Topic, "partition", b.Partition, "err", err)
		} else if warn {
			ic.logger.Warn("interceptor failed; on_error = accept appends the batch unchecked", "topic", b.Topic, "partition", b.Partition, "err", err)
		}
		return interceptor.AcceptBatch(), nil
	}
	if warn && fetch {
		ic.logger.Warn("fetch interceptor failed; on_error = reject fails the partition's fetch", "topic", b.Topic, "partition", b.Partition, "err", err)
	} else if warn {
		ic.logger.Warn("interceptor failed; on_error = reject fails the produce", "topic", b.Topic, "partition", b.Partition, "err", err)
	}
	return interceptor.Decision{}, fmt.Errorf("%w: %w", ErrInterceptFailed, err)
}

// TopicInterceptor is the produce interceptor a topic picks with
// gregor.interceptor.produce in configs: nil when it picks none. A name
// broker.toml does not declare is an error naming the config.
func (s *Set) TopicInterceptor(configs map[string]string) (*Interceptor, error) {
	return s.topicInterceptor(configs, ConfigInterceptProduce)
}

func (s *Set) topicInterceptor(configs map[string]string, key string) (*Interceptor, error) {
	v, ok := configs[key]
	if !ok {
		return nil, nil
	}
	name, _, ok, err := s.cfg.ExtensionFor(key, v, config.KindInterceptor, config.NoInterceptor)
	if err != nil || !ok {
		return nil, err
	}
	return s.interceptors[name], nil
}

// newInterceptor wraps an opened interceptor with its declaration's rules.
func newInterceptor(name string, decl config.Extension, impl interceptor.Interceptor, logger *slog.Logger, st *Stats) *Interceptor {
	return &Interceptor{Name: name, impl: impl, accept: decl.EffectiveOnError() == config.OnErrorAccept,
		timeout: CallTimeout(decl), logger: logger, stats: st}
}
