package api

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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
// Followers hold CLUSTER_ACTION, as in Kafka.
func (b *Broker) handleReplicaFetch(r *protocol.Request, req *kmsg.FetchRequest) protocol.Reply {
	if b.Security.Authorizer != nil && !b.authorizeCluster(r, sdkauth.OpClusterAction) {
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	resp, bytes, waitable := b.replicaFetchOnce(r.Version, req, true)
	wait := time.Duration(req.MaxWaitMillis) * time.Millisecond
	if wait > maxFetchWait {
		wait = maxFetchWait
	}
	if bytes >= int(req.MinBytes) || wait <= 0 || !waitable {
		return protocol.Reply{Resp: resp}
	}
	return protocol.Reply{Later: func() kmsg.Response {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			// Appends close the channel even when the high watermark stays.
			chans := b.fetchWaitChans(r.Version, req)
			resp, bytes, waitable = b.replicaFetchOnce(r.Version, req, false)
			if bytes >= int(req.MinBytes) || !waitable {
				return resp
			}
			if !waitAny(chans, timer.C, b.Done) {
				resp, _, _ = b.replicaFetchOnce(r.Version, req, false)
				return resp
			}
		}
	}}
}

// replicaFetchOnce reads every requested partition for a follower; record
// tells it to record the fetch offsets (once per request, not per wake).
func (b *Broker) replicaFetchOnce(version int16, req *kmsg.FetchRequest, record bool) (*kmsg.FetchResponse, int, bool) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.SessionID = 0
	id := replicaID(req)
	maxBytes := int(req.MaxBytes)
	if maxBytes <= 0 {
		maxBytes = 1<<31 - 1
	}
	total, waitable := 0, true
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name, known := b.fetchTopicName(version, rt)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			sp.PreferredReadReplica = -1
			sp.RecordBatches = []byte{}
			code, n := b.replicaFetchPartition(&sp, name, known, id, rp, maxBytes-total, version, record)
			sp.ErrorCode = code
			if code != 0 || sp.DivergingEpoch.EndOffset >= 0 {
				waitable = false
			}
			total += n
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, total, waitable
}

func (b *Broker) replicaFetchPartition(sp *kmsg.FetchResponseTopicPartition, name string, known bool, id int32,
	rp kmsg.FetchRequestTopicPartition, left int, version int16, record bool) (int16, int) {
	if !known {
		return kerr.UnknownTopicID.Code, 0
	}
	p, ok := b.partition(name, rp.Partition)
	if !ok {
		return kerr.UnknownTopicOrPartition.Code, 0
	}
	if leader, _ := p.Leadership(); leader != b.Config.NodeID {
		return kerr.NotLeaderForPartition.Code, 0
	}
	if err := p.CheckEpoch(rp.CurrentLeaderEpoch); err != nil {
		return errCode(err), 0
	}
	if version >= 12 && rp.LastFetchedEpoch >= 0 {
		if epoch, end, diverged := divergence(p, rp.LastFetchedEpoch, rp.FetchOffset); diverged {
			off := p.Offsets()
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = off.HighWatermark, off.LastStableOffset, off.LogStartOffset
			sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = epoch, end
			return 0, 0
		}
	}
	if record {
		f, err := p.UpdateFollower(id, rp.FetchOffset)
		switch {
		case errors.Is(err, partition.ErrUnknownReplica):
			return kerr.ReplicaNotAvailable.Code, 0
		case err != nil:
			return errCode(err), 0
		}
		if f.CaughtUp && b.ISR != nil {
			b.ISR.FollowerCaughtUp()
		}
	}
	limit := min(int(rp.PartitionMaxBytes), max(left, 0))
	res, err := p.ReadReplica(rp.FetchOffset, limit)
	if err != nil {
		if !errors.Is(err, partition.ErrOffsetOutOfRange) {
			b.Logger.Warn("replica fetch failed", "topic", name, "partition", rp.Partition, "replica", id, "err", err)
		}
		return errCode(err), 0
	}
	sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
	if len(res.Records) > 0 {
		sp.RecordBatches = res.Records
	}
	return 0, len(res.Records)
}
