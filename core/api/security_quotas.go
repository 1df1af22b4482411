package api

import (
	"reflect"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
)

// quotaState remembers which image's quotas the Quotas were fed.
type quotaState struct {
	from *controller.Image
	ptr  uintptr
}

// syncQuotas feeds the quota enforcer the image's client quotas when they
// changed (the image replaces its quota map on every change).
func (b *Broker) syncQuotas() {
	s := &b.Security
	if s.Quotas == nil {
		return
	}
	im := b.Controller.Image()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quotas.from == im {
		return
	}
	ptr := reflect.ValueOf(im.Quotas).Pointer()
	if s.quotas.from != nil && ptr == s.quotas.ptr {
		s.quotas.from = im
		return
	}
	s.Quotas.Set(QuotaEntries(im))
	s.quotas = quotaState{from: im, ptr: ptr}
}

// QuotaEntries converts an image's client quotas for auth.Quotas.
func QuotaEntries(im *controller.Image) []auth.QuotaEntry {
	out := make([]auth.QuotaEntry, 0, len(im.Quotas))
	for _, q := range im.Quotas {
		e := auth.QuotaEntry{Values: q.Values}
		for _, p := range q.Entity {
			qp := &auth.QuotaPart{Default: p.Default, Name: p.Name}
			switch p.Type {
			case auth.QuotaEntityUser:
				e.User = qp
			case auth.QuotaEntityClientID:
				e.ClientID = qp
			case auth.QuotaEntityIP:
				e.IP = qp
			}
		}
		out = append(out, e)
	}
	return out
}

// ConnectionRate is the connection_creation_rate quota of an address, for
// the listeners' connection limiter.
func (b *Broker) ConnectionRate(ip string) (float64, bool) {
	if b.Security.Quotas == nil {
		return 0, false
	}
	b.syncQuotas()
	return b.Security.Quotas.ConnectionRate(ip)
}

// quotaExempt are the requests Kafka never throttles for request time: those
// a client needs to connect and authenticate.
func quotaExempt(key int16) bool {
	switch key {
	case 17, 18, 36: // SaslHandshake, ApiVersions, SaslAuthenticate
		return true
	}
	return false
}

// RequestQuota is the listeners' protocol.RequestQuota: produce bytes
// against producer_byte_rate, fetched bytes against consumer_byte_rate
// (followers are exempt), handler time against request_percentage. The
// longest throttle wins. A fetch answered later is accounted for when its
// answer is ready, and only its throttle_time_ms says so.
func (b *Broker) RequestQuota(r *protocol.Request, reply *protocol.Reply, handled time.Duration) time.Duration {
	q := b.Security.Quotas
	if q == nil {
		return 0
	}
	b.syncQuotas()
	user := ""
	if p := principalOf(r); p.Type == "User" {
		user = p.Name
	}
	var throttle time.Duration
	if !quotaExempt(r.Key) {
		throttle = q.Record(auth.QuotaRequestPercentage, user, r.ClientID, handled.Seconds()*100)
	}
	switch m := r.Msg.(type) {
	case *kmsg.ProduceRequest:
		n := 0
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				n += len(p.Records)
			}
		}
		throttle = max(throttle, q.Record(auth.QuotaProducerByteRate, user, r.ClientID, float64(n)))
	case *kmsg.FetchRequest:
		if m.ReplicaID >= 0 || m.ReplicaState.ID >= 0 {
			break
		}
		if resp, ok := reply.Resp.(*kmsg.FetchResponse); ok {
			throttle = max(throttle, q.Record(auth.QuotaConsumerByteRate, user, r.ClientID, float64(fetchedBytes(resp)+reply.Splice.ExtraBytes())))
		}
		if later := reply.Later; later != nil {
			reply.Later = func() kmsg.Response {
				resp := later()
				if fr, ok := resp.(*kmsg.FetchResponse); ok {
					d := q.Record(auth.QuotaConsumerByteRate, user, r.ClientID, float64(fetchedBytes(fr)+reply.Splice.ExtraBytes()))
					if ms := int32(min(d.Milliseconds(), 1<<31-1)); ms > fr.ThrottleMillis {
						fr.ThrottleMillis = ms
					}
				}
				return resp
			}
		}
	}
	return throttle
}

func fetchedBytes(resp *kmsg.FetchResponse) int {
	n := 0
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			n += len(p.RecordBatches)
		}
	}
	return n
}
