package api

import (
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/fetchsession"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// replicaID is the fetching follower's id: ReplicaState (v15+) or ReplicaID.
func replicaID(req *kmsg.FetchRequest) int32 {
	if req.ReplicaState.ID >= 0 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// handleReplicaFetch answers a follower: records up to the log end offset,
// the follower's fetch offset recorded as its log end (which advances the
// high watermark), and a diverging epoch when its log parted from ours.
// Only a broker may fetch as a follower (see followerConn): the answer
// skips the topic's fetch interceptor and moves the high watermark.
func (b *Broker) handleReplicaFetch(r *protocol.Request, req *kmsg.FetchRequest) protocol.Reply {
	if !b.followerConn(r) {
		b.Logger.Warn("follower fetch refused: the connection is not a broker's", "replica", replicaID(req),
			"listener", connListener(r), "principal", principalOf(r).String(), "remote", hostOf(r))
		return protocol.Reply{Resp: refusedReplicaFetch(req)}
	}
	// Followers read up to the log end offset, and a leader that loses its
	// leadership cuts its uncommitted tail off the active segment in place
	// and appends the new leader's batches there: a file run read before
	// that would send those instead. So follower fetches copy their bytes
	// until truncation leaves the old file intact (as the cleaner's swap
	// does); consumers read below the high watermark, which is not cut.
	var splice *protocol.Splice
	resp, bytes, waitable := b.replicaFetchOnce(r.Version, req, true, splice)
	wait := time.Duration(req.MaxWaitMillis) * time.Millisecond
	if wait > maxFetchWait {
		wait = maxFetchWait
	}
	if bytes.total >= int(req.MinBytes) || wait <= 0 || !waitable {
		return protocol.Reply{Resp: b.sentToFollower(resp, bytes), Splice: splice}
	}
	splice.Reset() // read again before the answer; nothing held meanwhile
	return protocol.Reply{Splice: splice, Later: func() kmsg.Response {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			// Appends close the channel even when the high watermark stays.
			chans := b.fetchWaitChans(r.Version, fetchsession.RequestParts(req))
			splice.Reset()
			resp, bytes, waitable = b.replicaFetchOnce(r.Version, req, false, splice)
			if bytes.total >= int(req.MinBytes) || !waitable {
				return b.sentToFollower(resp, bytes)
			}
			splice.Reset() // nothing held while waiting
			if !waitAny(chans, timer.C, b.Done) {
				splice.Reset()
				resp, bytes, _ = b.replicaFetchOnce(r.Version, req, false, splice)
				return b.sentToFollower(resp, bytes)
			}
		}
	}}
}

// replicaBytes counts the record bytes of a follower's fetch answer.
type replicaBytes struct {
	total int
	// throttled is the part for replicas throttled on the leader side.
	throttled int
}

// sentToFollower records the bytes of throttled replicas in the answer
// that goes out against the leader quota, as Kafka records the response
// (one answer is recorded once, however often a long poll re-read it).
func (b *Broker) sentToFollower(resp *kmsg.FetchResponse, n replicaBytes) *kmsg.FetchResponse {
	if b.Throttle != nil {
		b.Throttle.Leader.Record(n.throttled)
	}
	return resp
}

// replicaFetchOnce reads every requested partition for a follower; record
// tells it to record the fetch offsets (once per request, not per wake).
// With splice, records are file runs taken into it where the log can.
func (b *Broker) replicaFetchOnce(version int16, req *kmsg.FetchRequest, record bool, splice *protocol.Splice) (*kmsg.FetchResponse, replicaBytes, bool) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.SessionID = 0
	id := replicaID(req)
	maxBytes := int(req.MaxBytes)
	if maxBytes <= 0 {
		maxBytes = 1<<31 - 1
	}
	var total replicaBytes
	waitable := true
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name, known := b.fetchTopicName(version, fetchKey{Topic: rt.Topic, TopicID: rt.TopicID})
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			sp.PreferredReadReplica = -1
			sp.RecordBatches = []byte{}
			code, n, throttled := b.replicaFetchPartition(&sp, name, known, id, rp, maxBytes-total.total, version, record, splice)
			sp.ErrorCode = code
			if code != 0 || sp.DivergingEpoch.EndOffset >= 0 {
				waitable = false
			}
			total.total += n
			if throttled {
				total.throttled += n
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, total, waitable
}

// replicaFetchPartition answers one partition of a follower's fetch: its
// error code, the record bytes in the answer, and whether the replica is
// throttled on the leader side. A throttled follower outside the ISR gets
// an empty answer while the leader quota is exceeded.
func (b *Broker) replicaFetchPartition(sp *kmsg.FetchResponseTopicPartition, name string, known bool, id int32,
	rp kmsg.FetchRequestTopicPartition, left int, version int16, record bool, splice *protocol.Splice) (int16, int, bool) {
	if !known {
		return kerr.UnknownTopicID.Code, 0, false
	}
	p, ok := b.Partition(name, rp.Partition)
	if !ok {
		return kerr.UnknownTopicOrPartition.Code, 0, false
	}
	if leader, _ := p.Leadership(); leader != b.Config.NodeID {
		return kerr.NotLeaderForPartition.Code, 0, false
	}
	if err := p.CheckEpoch(rp.CurrentLeaderEpoch); err != nil {
		return errCode(err), 0, false
	}
	if !p.IsFollower(id) {
		return notAFollower(rp), 0, false
	}
	if version >= 12 && rp.LastFetchedEpoch >= 0 {
		if epoch, end, diverged := divergence(p, rp.LastFetchedEpoch, rp.FetchOffset); diverged {
			off := p.Offsets()
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = off.HighWatermark, off.LastStableOffset, off.LogStartOffset
			sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = epoch, end
			return 0, 0, false
		}
	}
	if record {
		f, err := p.UpdateFollower(id, rp.FetchOffset)
		switch {
		case errors.Is(err, partition.ErrUnknownReplica): // reassigned since IsFollower
			return notAFollower(rp), 0, false
		case err != nil:
			return errCode(err), 0, false
		}
		if f.CaughtUp && b.ISR != nil {
			b.ISR.FollowerCaughtUp()
		}
	}
	hold, throttled := b.Throttle.LeaderHolds(name, rp.Partition, func() bool { return inISR(p, id) })
	if hold {
		off := p.Offsets()
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = off.HighWatermark, off.LastStableOffset, off.LogStartOffset
		return 0, 0, true
	}
	limit := min(int(rp.PartitionMaxBytes), max(left, 0))
	if splice != nil {
		if rr, ok, err := p.ReadReplicaRange(rp.FetchOffset, limit); ok {
			if err != nil {
				if !errors.Is(err, partition.ErrOffsetOutOfRange) {
					b.Logger.Warn("replica fetch failed", "topic", name, "partition", rp.Partition, "replica", id, "err", err)
				}
				return errCode(err), 0, throttled
			}
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = rr.HighWatermark, rr.LastStableOffset, rr.LogStartOffset
			if fr := rr.Range; fr.Len > 0 {
				sp.RecordBatches = splice.Add(protocol.FileBytes{FD: fr.FD, Off: fr.Pos, Len: fr.Len, Release: fr.Close})
			}
			return 0, rr.Range.Len, throttled
		}
	}
	res, err := p.ReadReplica(rp.FetchOffset, limit)
	if err != nil {
		if !errors.Is(err, partition.ErrOffsetOutOfRange) {
			b.Logger.Warn("replica fetch failed", "topic", name, "partition", rp.Partition, "replica", id, "err", err)
		}
		return errCode(err), 0, throttled
	}
	sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
	if len(res.Records) > 0 {
		sp.RecordBatches = res.Records
	}
	return 0, len(res.Records), throttled
}

// inISR reports whether replica id is in the ISR of p, led here.
func inISR(p *partition.Partition, id int32) bool {
	v, ok := p.ReplicaView()
	return ok && slices.Contains(v.ISR, id)
}

// followerConn reports whether r's connection may fetch as a follower.
// With an authorizer that is CLUSTER_ACTION on the cluster, as in Kafka.
// Without one, Kafka answers any client that names a replica id, which
// would hand it records that the topic's fetch interceptor masks for
// consumers, and let it move the high watermark. So the request must come
// in on the inter-broker listener, the one followers dial, and when that
// listener authenticates its peers (SASL, or TLS with client certificates
// required) and security.super_users lists any, its principal must be one
// of them. A PLAINTEXT inter-broker listener authenticates nobody: it must
// be reachable by the brokers alone (README, Security).
func (b *Broker) followerConn(r *protocol.Request) bool {
	if b.Security.Authorizer != nil {
		return b.authorizeCluster(r, sdkauth.OpClusterAction)
	}
	if r.Conn == nil { // a handler called directly, by a test
		return true
	}
	l, ok := b.Config.InterBrokerListener()
	if !ok || r.Conn.Listener != l.Name {
		return false
	}
	sec := b.Config.Security
	authenticates := config.IsSASLProtocol(l.Protocol) || (config.IsTLSProtocol(l.Protocol) && sec.TLSClientAuth == "required")
	if !authenticates || len(sec.SuperUsers) == 0 {
		return true
	}
	return slices.Contains(sec.SuperUsers, r.Conn.Principal())
}

// connListener names the listener r came in on.
func connListener(r *protocol.Request) string {
	if r.Conn == nil {
		return ""
	}
	return r.Conn.Listener
}

// refusedReplicaFetch answers a follower fetch from a connection that may
// not make one: TOPIC_AUTHORIZATION_FAILED for every partition, as Kafka
// answers a follower without CLUSTER_ACTION.
func refusedReplicaFetch(req *kmsg.FetchRequest) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.SessionID = 0
	for _, rt := range req.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			sp.PreferredReadReplica = -1
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// notAFollower is Kafka's answer to a follower fetch whose replica id is
// not another replica of the partition: UNKNOWN_LEADER_EPOCH when the
// request names the leader epoch (the follower may know of a reassignment
// the leader has yet to see, and retries), NOT_LEADER_OR_FOLLOWER without.
func notAFollower(rp kmsg.FetchRequestTopicPartition) int16 {
	if rp.CurrentLeaderEpoch >= 0 {
		return kerr.UnknownLeaderEpoch.Code
	}
	return kerr.NotLeaderForPartition.Code
}
