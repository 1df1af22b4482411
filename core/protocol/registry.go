package protocol

import (
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Reply is what a handler gives back for one request. Exactly one of Resp or
// Later is set, unless None is true (acks=0 produce has no response).
type Reply struct {
	// Resp is a response that is ready now.
	Resp kmsg.Response
	// Later produces the response once it is ready (a fetch long poll, an
	// acks=all wait). It runs on the connection's writer, after every earlier
	// response on the connection, so it may block.
	Later func() kmsg.Response
	// None means the request gets no response at all.
	None bool
	// Close asks for the connection to be closed after this reply.
	Close bool
	// Throttle is how long a client over its quota is held back: the
	// response carries it as throttle_time_ms and the connection is not
	// read from again until it has passed (Kafka mutes the channel).
	Throttle time.Duration
	// Splice, when set, holds the file runs the response sends in place of
	// its markers (a fetch sending records from segment files without
	// copying them); the writer releases it once the response is written
	// or dropped.
	Splice *Splice
}

// Request is one decoded request.
type Request struct {
	Key           int16
	Version       int16
	CorrelationID int32
	ClientID      string
	Msg           kmsg.Request
	Conn          *ConnInfo
	// splice is the one NewSplice started: the server releases it when
	// the handler panics or its reply does not carry it.
	splice *Splice
}

// NewSplice starts the file runs of this request's response (see Splice).
// Unlike a splice of its own, one started here is released by the server
// on every path, a handler panic or a reply without it included.
func (r *Request) NewSplice(flexible bool) *Splice {
	if r.splice != nil {
		r.splice.Release()
	}
	r.splice = NewSplice(flexible)
	return r.splice
}

// API is one Kafka API key served by Gregor.
type API struct {
	Key    int16
	Min    int16
	Max    int16
	Handle func(*Request) Reply
}

// Registry maps API keys to their handlers. It is built once at start and
// read-only afterwards.
type Registry struct {
	apis map[int16]API
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{apis: map[int16]API{}} }

// Add registers an API. A duplicate key, an inverted range or a maximum above
// what the codec can decode is a programming error and panics at start-up.
func (r *Registry) Add(a API) {
	if _, dup := r.apis[a.Key]; dup {
		panic(fmt.Sprintf("protocol: API key %d (%s) registered twice", a.Key, kmsg.NameForKey(a.Key)))
	}
	req := kmsg.RequestForKey(a.Key)
	if req == nil {
		panic(fmt.Sprintf("protocol: API key %d is unknown to the codec", a.Key))
	}
	if a.Min < 0 || a.Min > a.Max || a.Max > req.MaxVersion() {
		panic(fmt.Sprintf("protocol: API key %d (%s): bad version range %d..%d (codec max %d)",
			a.Key, kmsg.NameForKey(a.Key), a.Min, a.Max, req.MaxVersion()))
	}
	if a.Handle == nil {
		panic(fmt.Sprintf("protocol: API key %d has no handler", a.Key))
	}
	r.apis[a.Key] = a
}

// Lookup returns the API for a key.
func (r *Registry) Lookup(key int16) (API, bool) {
	a, ok := r.apis[key]
	return a, ok
}

// APIs returns every registered API ordered by key; ApiVersions is built from it.
func (r *Registry) APIs() []API {
	out := make([]API, 0, len(r.apis))
	for _, a := range r.apis {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
