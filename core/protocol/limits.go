package protocol

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestQuota is told of each request of an authenticated client once its
// handler has returned, with the reply and how long the handler ran, and
// returns how long to throttle the client for its quotas (0: not at all).
// It may wrap reply.Later to account for a response that is not ready yet.
type RequestQuota func(r *Request, reply *Reply, handled time.Duration) time.Duration

// applyThrottle sets throttle_time_ms in the reply's response, now or when
// it is ready.
func applyThrottle(reply *Reply, d time.Duration) {
	ms := int32(min(d.Milliseconds(), int64(1<<31-1)))
	set := func(resp kmsg.Response) {
		if st, ok := resp.(kmsg.SetThrottleResponse); ok {
			if cur, _ := resp.(kmsg.ThrottleResponse).Throttle(); cur < ms {
				st.SetThrottle(ms)
			}
		}
	}
	if reply.Resp != nil {
		set(reply.Resp)
	}
	if later := reply.Later; later != nil {
		reply.Later = func() kmsg.Response {
			resp := later()
			if resp != nil {
				set(resp)
			}
			return resp
		}
	}
}

// ConnLimiter admits connections for every listener of a broker: at most
// Max open in total and MaxPerIP from one address, and at most Rate new
// connections a second (Kafka's max.connection.creation.rate), or the
// address's own rate (the connection_creation_rate quota of ip entities)
// when IPRate gives one. Zero values mean no limit. Its methods are safe
// for concurrent use.
type ConnLimiter struct {
	Max      int
	MaxPerIP int
	// PerIPOverrides replace MaxPerIP for some addresses (Kafka's
	// max.connections.per.ip.overrides); 0 there admits none.
	PerIPOverrides map[string]int
	Rate           float64
	// IPRate returns an address's connection creation quota, if any.
	IPRate func(ip string) (float64, bool)
	// Now is the clock; nil means the wall clock.
	Now func() time.Time

	mu      sync.Mutex // guards the fields below
	open    int
	perIP   map[string]int
	all     tokenBucket
	byIP    map[string]*tokenBucket
	sweepAt time.Time
}

// Refusal says why a connection was refused.
type Refusal string

// Reasons for refusing a connection.
const (
	RefusedTotal  Refusal = "broker connection limit reached"
	RefusedPerIP  Refusal = "per-address connection limit reached"
	RefusedRate   Refusal = "connection creation rate exceeded"
	RefusedIPRate Refusal = "per-address connection creation rate exceeded"
	admitted      Refusal = ""
	maxTrackedIPs         = 100000
)

// Admit takes a place for a connection from ip; it returns "" when
// admitted (and Release must follow), else why not.
func (l *ConnLimiter) Admit(ip string) Refusal {
	if l == nil {
		return admitted
	}
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP == nil {
		l.perIP, l.byIP = map[string]int{}, map[string]*tokenBucket{}
	}
	switch {
	case l.Max > 0 && l.open >= l.Max:
		return RefusedTotal
	}
	if limit, ok := l.PerIPOverrides[ip]; ok {
		if l.perIP[ip] >= limit {
			return RefusedPerIP
		}
	} else if l.MaxPerIP > 0 && l.perIP[ip] >= l.MaxPerIP {
		return RefusedPerIP
	}
	if l.Rate > 0 && !l.all.take(now, l.Rate) {
		return RefusedRate
	}
	if l.IPRate != nil {
		rate, ok := l.IPRate(ip)
		if ok && rate > 0 {
			b := l.byIP[ip]
			if b == nil {
				l.sweep(now)
				b = &tokenBucket{}
				l.byIP[ip] = b
			}
			if !b.take(now, rate) {
				return RefusedIPRate
			}
		}
	}
	l.open++
	l.perIP[ip]++
	return admitted
}

// Release gives back the place of a closed connection from ip.
func (l *ConnLimiter) Release(ip string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip)
	}
}

// sweep forgets the rate buckets of addresses that are full again, so
// connections from many addresses cannot grow the map without bound.
func (l *ConnLimiter) sweep(now time.Time) {
	if len(l.byIP) < maxTrackedIPs && now.Before(l.sweepAt) {
		return
	}
	l.sweepAt = now.Add(time.Minute)
	for ip, b := range l.byIP {
		if now.Sub(b.at) > time.Minute {
			delete(l.byIP, ip)
		}
	}
	if len(l.byIP) >= maxTrackedIPs {
		clear(l.byIP)
	}
}

// tokenBucket allows rate events a second with a burst of one second's
// worth.
type tokenBucket struct {
	tokens float64
	at     time.Time
}

func (b *tokenBucket) take(now time.Time, rate float64) bool {
	if b.at.IsZero() {
		b.tokens = rate
	} else {
		b.tokens = min(rate, b.tokens+now.Sub(b.at).Seconds()*rate)
	}
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
