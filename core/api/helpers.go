package api

import (
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
)

// Helpers the handlers share; what they ask of the broker is in
// core/broker.

// groupOps is the bit set of group operations a client may perform while no
// authorizer is configured: READ, DELETE and DESCRIBE.
const groupOps = 1<<3 | 1<<6 | 1<<8

// clientHost is how Kafka shows a client's address: "/" and the IP.
func clientHost(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	if ta, ok := addr.(*net.TCPAddr); ok {
		return "/" + ta.IP.String()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "/" + addr.String()
	}
	return "/" + host
}

func millis(v int32) time.Duration { return time.Duration(v) * time.Millisecond }

// durableGroupReply answers resp at once, or, on fsync durability, once
// the groups' partitions are on disk (broker.Broker.SyncGroups); failed is
// called to mark the answer when the fsync fails.
func (b *Broker) durableGroupReply(resp kmsg.Response, failed func(code int16), groups ...string) protocol.Reply {
	if !b.GroupFsync() {
		return protocol.Reply{Resp: resp}
	}
	return protocol.Reply{Later: func() kmsg.Response {
		if err := b.SyncGroups(groups...); err != nil {
			failed(kerr.CoordinatorNotAvailable.Code)
		}
		return resp
	}}
}
