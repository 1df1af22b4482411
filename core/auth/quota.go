package auth

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"
)

// Quota keys, Kafka's names.
const (
	QuotaProducerByteRate       = "producer_byte_rate"
	QuotaConsumerByteRate       = "consumer_byte_rate"
	QuotaRequestPercentage      = "request_percentage"
	QuotaControllerMutationRate = "controller_mutation_rate"
	QuotaConnectionCreationRate = "connection_creation_rate"
)

// Quota entity types, Kafka's names.
const (
	QuotaEntityUser     = "user"
	QuotaEntityClientID = "client-id"
	QuotaEntityIP       = "ip"
)

// ValidateQuota applies Kafka's checks to one quota value of an entity whose
// component types are types (sorted or not): user and client-id entities
// take the client quotas, ip entities the connection creation rate, and
// every value must be positive (a rate of connections a whole number).
func ValidateQuota(types []string, key string, value float64) error {
	ip := len(types) == 1 && types[0] == QuotaEntityIP
	switch key {
	case QuotaProducerByteRate, QuotaConsumerByteRate, QuotaRequestPercentage, QuotaControllerMutationRate:
		if ip {
			return fmt.Errorf("%w: %s is not a quota of ip entities", ErrInvalidQuota, key)
		}
	case QuotaConnectionCreationRate:
		if !ip {
			return fmt.Errorf("%w: %s is a quota of ip entities only", ErrInvalidQuota, key)
		}
		if value != math.Trunc(value) {
			return fmt.Errorf("%w: %s must be a whole number, not %v", ErrInvalidQuota, key, value)
		}
	default:
		return fmt.Errorf("%w: unknown quota key %q", ErrInvalidQuota, key)
	}
	if !(value > 0) || math.IsInf(value, 0) {
		return fmt.Errorf("%w: %s must be a positive number, not %v", ErrInvalidQuota, key, value)
	}
	return nil
}

// QuotaPart is one component of a quota entity: nil means the entity has
// no component of that type, Default the type's default entity.
type QuotaPart struct {
	Default bool
	Name    string
}

// QuotaEntry is one configured entity with its values.
type QuotaEntry struct {
	User, ClientID *QuotaPart
	IP             *QuotaPart
	Values         map[string]float64
}

// QuotaConfig sets how rates are measured: over Samples windows of Window
// each (Kafka's quota.window.num and quota.window.size.seconds), which also
// bounds a throttle to Samples × Window.
type QuotaConfig struct {
	Window  time.Duration
	Samples int
	// MaxBuckets bounds the rate buckets kept; client ids come from
	// clients, so past this count buckets idle for the longest go first.
	MaxBuckets int
	// Now is the clock; nil means the wall clock.
	Now func() time.Time
}

// DefaultQuotaConfig is Kafka's: eleven one-second windows.
func DefaultQuotaConfig() QuotaConfig {
	return QuotaConfig{Window: time.Second, Samples: 11, MaxBuckets: 100000}
}

// Quotas measures clients' byte and request-time rates against the quotas
// in force and says how long to throttle them, with Kafka's precedence:
// user+client-id, user+default client-id, user, default user+client-id,
// default user+default client-id, default user, client-id, default
// client-id. A rate is shared by every connection that matches the same
// entity: a user's quota by all the user's clients, a default user quota by
// each user separately.
type Quotas struct {
	cfg QuotaConfig

	mu      sync.Mutex // guards the fields below
	entries map[quotaKey]map[string]float64
	ipRates map[string]float64 // connection_creation_rate by ip; "" is the default
	buckets map[bucketKey]*rateBucket
}

// quotaKey identifies a user/client-id entity: "" name with set=false
// means the component is absent.
type quotaKey struct {
	userSet, userDefault     bool
	user                     string
	clientSet, clientDefault bool
	client                   string
}

// bucketKey is what one rate is measured for: a quota key, and the
// concrete user and client id its defaults stand for.
type bucketKey struct {
	quota        string
	user, client string
	userSet      bool
	clientSet    bool
}

// NewQuotas returns quotas with none in force.
func NewQuotas(cfg QuotaConfig) *Quotas {
	if cfg.Window <= 0 {
		cfg.Window = time.Second
	}
	if cfg.Samples < 2 {
		cfg.Samples = 2
	}
	if cfg.MaxBuckets <= 0 {
		cfg.MaxBuckets = 100000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Quotas{cfg: cfg, entries: map[quotaKey]map[string]float64{}, ipRates: map[string]float64{},
		buckets: map[bucketKey]*rateBucket{}}
}

// Set replaces the quotas in force. Measured rates are kept.
func (q *Quotas) Set(entries []QuotaEntry) {
	byKey := map[quotaKey]map[string]float64{}
	ip := map[string]float64{}
	for _, e := range entries {
		if e.IP != nil {
			if v, ok := e.Values[QuotaConnectionCreationRate]; ok {
				name := e.IP.Name
				if e.IP.Default {
					name = ""
				}
				ip[name] = v
			}
			continue
		}
		var k quotaKey
		if e.User != nil {
			k.userSet, k.userDefault, k.user = true, e.User.Default, e.User.Name
		}
		if e.ClientID != nil {
			k.clientSet, k.clientDefault, k.client = true, e.ClientID.Default, e.ClientID.Name
		}
		byKey[k] = e.Values
	}
	q.mu.Lock()
	q.entries, q.ipRates = byKey, ip
	q.mu.Unlock()
}

// ConnectionRate is the connection_creation_rate quota of an address: its
// own, else the default ip entity's; ok is false when neither is set.
func (q *Quotas) ConnectionRate(ip string) (rate float64, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if v, ok := q.ipRates[ip]; ok && ip != "" {
		return v, true
	}
	v, ok := q.ipRates[""]
	return v, ok
}

// resolve finds the entity whose value for quota applies to (user,
// client): Kafka's eight-step precedence. The bucket key says whose rate it
// is.
func (q *Quotas) resolve(quota, user, client string) (float64, bucketKey, bool) {
	type step struct {
		k              quotaKey
		byUser, byClnt bool // the rate is kept per concrete user / client id
	}
	steps := [...]step{
		{quotaKey{userSet: true, user: user, clientSet: true, client: client}, true, true},
		{quotaKey{userSet: true, user: user, clientSet: true, clientDefault: true}, true, true},
		{quotaKey{userSet: true, user: user}, true, false},
		{quotaKey{userSet: true, userDefault: true, clientSet: true, client: client}, true, true},
		{quotaKey{userSet: true, userDefault: true, clientSet: true, clientDefault: true}, true, true},
		{quotaKey{userSet: true, userDefault: true}, true, false},
		{quotaKey{clientSet: true, client: client}, false, true},
		{quotaKey{clientSet: true, clientDefault: true}, false, true},
	}
	for _, s := range steps {
		vals, ok := q.entries[s.k]
		if !ok {
			continue
		}
		v, ok := vals[quota]
		if !ok {
			continue
		}
		bk := bucketKey{quota: quota, userSet: s.byUser, clientSet: s.byClnt}
		if s.byUser {
			bk.user = user
		}
		if s.byClnt {
			bk.client = client
		}
		return v, bk, true
	}
	return 0, bucketKey{}, false
}

// Limit is the quota value that applies to (user, client) for quota, for
// tests and descriptions; ok is false when none does.
func (q *Quotas) Limit(quota, user, client string) (float64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	v, _, ok := q.resolve(quota, user, client)
	return v, ok
}

// Record adds value (bytes, or request-handling time as a percentage of a
// second for request_percentage) to the rate of whoever (user, client)'s
// quota belongs to, and returns how long to throttle them: zero while the
// rate is within the quota, else Kafka's (rate - quota) / quota × the
// measured window, bounded by the whole window.
func (q *Quotas) Record(quota, user, client string, value float64) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	limit, bk, ok := q.resolve(quota, user, client)
	if !ok {
		return 0
	}
	now := q.cfg.Now()
	b := q.bucket(bk, now)
	b.record(now, value, q.cfg)
	rate, window := b.rate(now, q.cfg)
	if rate <= limit {
		return 0
	}
	t := time.Duration((rate - limit) / limit * float64(window))
	if max := time.Duration(q.cfg.Samples) * q.cfg.Window; t > max {
		t = max
	}
	return t
}

// bucket finds or makes the rate bucket of bk, evicting idle buckets when
// the bound is reached.
func (q *Quotas) bucket(bk bucketKey, now time.Time) *rateBucket {
	if b, ok := q.buckets[bk]; ok {
		return b
	}
	if len(q.buckets) >= q.cfg.MaxBuckets {
		q.evict(now)
	}
	b := &rateBucket{samples: make([]rateSample, q.cfg.Samples)}
	q.buckets[bk] = b
	return b
}

// evict drops buckets with nothing in their window; if none is, it drops
// the one used least recently.
func (q *Quotas) evict(now time.Time) {
	horizon := now.Add(-time.Duration(q.cfg.Samples) * q.cfg.Window)
	var oldest bucketKey
	var oldestAt time.Time
	for k, b := range q.buckets {
		if b.last.Before(horizon) {
			delete(q.buckets, k)
			continue
		}
		if oldestAt.IsZero() || b.last.Before(oldestAt) {
			oldest, oldestAt = k, b.last
		}
	}
	if len(q.buckets) >= q.cfg.MaxBuckets {
		delete(q.buckets, oldest)
	}
}

// Buckets is how many rates are being measured.
func (q *Quotas) Buckets() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.buckets)
}

// rateBucket is Kafka's sampled Rate: a ring of windows.
type rateBucket struct {
	samples []rateSample
	cur     int
	last    time.Time
}

type rateSample struct {
	start time.Time
	total float64
}

func (b *rateBucket) record(now time.Time, v float64, cfg QuotaConfig) {
	s := &b.samples[b.cur]
	if s.start.IsZero() {
		s.start = now
	} else if now.Sub(s.start) >= cfg.Window {
		b.cur = (b.cur + 1) % len(b.samples)
		b.samples[b.cur] = rateSample{start: now}
		s = &b.samples[b.cur]
	}
	s.total += v
	b.last = now
}

// rate is the total over the live windows divided by the time they span,
// which is taken as at least Samples-1 whole windows so that a first burst
// is not measured over a few milliseconds (as Kafka does).
func (b *rateBucket) rate(now time.Time, cfg QuotaConfig) (float64, time.Duration) {
	horizon := now.Add(-time.Duration(len(b.samples)) * cfg.Window)
	var total float64
	var oldest time.Time
	for i := range b.samples {
		s := &b.samples[i]
		if s.start.IsZero() || s.start.Before(horizon) {
			continue
		}
		total += s.total
		if oldest.IsZero() || s.start.Before(oldest) {
			oldest = s.start
		}
	}
	elapsed := now.Sub(oldest)
	if min := time.Duration(len(b.samples)-1) * cfg.Window; elapsed < min {
		elapsed = min
	}
	return total / elapsed.Seconds(), elapsed
}

// FormatQuota renders a quota value as Kafka tools print it.
func FormatQuota(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
