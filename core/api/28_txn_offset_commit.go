package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// TxnOffsetCommit v0-6: offsets committed inside a transaction, visible to
// the group only once it commits. v5 is KIP-890 part 2: the offsets
// partition joins the transaction implicitly, without AddOffsetsToTxn. v6
// names topics by id (KIP-1319); an unknown id answers UNKNOWN_TOPIC_ID.
func init() { reg(28, 0, 6, (*Broker).handleTxnOffsetCommit) }

func (b *Broker) handleTxnOffsetCommit(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.TxnOffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	if r.Version >= 6 {
		for i := range req.Topics {
			req.Topics[i].Topic = broker.TopicNameByID(b.Controller.Image(), req.Topics[i].TopicID)
		}
	}
	// pre holds, in request order, each partition's answer decided before the
	// commit (topic authorization, unknown partitions); 0 means committed.
	var pre []int16
	answer := func(code int16, errs []error) protocol.Reply {
		i, j := 0, 0
		for _, t := range req.Topics {
			st := kmsg.NewTxnOffsetCommitResponseTopic()
			st.Topic, st.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p.Partition, code
				switch {
				case pre != nil && pre[i] != 0:
					sp.ErrorCode = pre[i]
				case code != 0:
				case errs != nil:
					sp.ErrorCode = errCode(errs[j])
					j++
				}
				i++
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return protocol.Reply{Resp: resp}
	}
	switch {
	case !b.authorize(r, sdkauth.OpWrite, sdkauth.ResourceTransactionalID, req.TransactionalID):
		return answer(kerr.TransactionalIDAuthorizationFailed.Code, nil)
	case !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group):
		return answer(kerr.GroupAuthorizationFailed.Code, nil)
	case b.Groups == nil:
		return answer(kerr.CoordinatorNotAvailable.Code, nil)
	}
	// As in Kafka, a topic the principal may not READ or a partition that
	// does not exist fails on its own; the other partitions are committed.
	readAuth := b.topicAuth(r, sdkauth.OpRead)
	im := b.Controller.Image()
	commit := 0
	for _, t := range req.Topics {
		tt, ok := im.Topic(t.Topic)
		for _, p := range t.Partitions {
			code := int16(0)
			switch {
			case r.Version >= 6 && t.Topic == "":
				code = kerr.UnknownTopicID.Code
			case !readAuth.allowed(t.Topic):
				code = kerr.TopicAuthorizationFailed.Code
			case !ok || p.Partition < 0 || int(p.Partition) >= len(tt.Partitions):
				code = kerr.UnknownTopicOrPartition.Code
			default:
				commit++
			}
			pre = append(pre, code)
		}
	}
	if commit == 0 {
		return answer(0, nil)
	}
	if r.Version >= 5 {
		if code := b.addOffsetsPartition(r.Version, 3, true, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group); code != 0 {
			return answer(txnOffsetCommitCode(code), nil)
		}
	}
	cr := group.TxnCommitRequest{Group: req.Group, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
		MemberID: req.MemberID, InstanceID: req.InstanceID, Generation: req.Generation}
	if r.Version < 3 {
		cr.Generation = -1
	}
	i := 0
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if i++; pre[i-1] != 0 {
				continue
			}
			md := ""
			if p.Metadata != nil {
				md = *p.Metadata
			}
			leaderEpoch := p.LeaderEpoch
			if r.Version < 2 {
				leaderEpoch = -1
			}
			cr.Partitions = append(cr.Partitions, group.CommitPartition{
				TopicPartition: group.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				Offset:         p.Offset, LeaderEpoch: leaderEpoch, Metadata: md,
			})
		}
	}
	errs, err := b.Groups.CommitTxnOffsets(cr)
	if err != nil {
		code := b.groupCode(err)
		if code == kerr.ProducerFenced.Code && r.Version < 3 {
			code = kerr.InvalidProducerEpoch.Code
		}
		return answer(code, nil)
	}
	if b.Config.Log.Durability == config.DurabilityFsync {
		if p := b.Groups.Partition(req.Group); p != nil {
			if err := p.Sync(); err != nil {
				return answer(kerr.CoordinatorNotAvailable.Code, nil)
			}
		}
	}
	return answer(0, errs)
}

// txnOffsetCommitCode is the answer to a TxnOffsetCommit whose transaction
// could not be verified, normalised as Kafka's group coordinator does: a
// coordinator that timed out or is short of replicas is
// COORDINATOR_NOT_AVAILABLE, one that moved is NOT_COORDINATOR, so that
// clients retry (or, as franz-go, abort) rather than fail.
func txnOffsetCommitCode(code int16) int16 {
	switch code {
	case kerr.RequestTimedOut.Code, kerr.NotEnoughReplicas.Code, kerr.UnknownTopicOrPartition.Code:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		return kerr.NotCoordinator.Code
	}
	return code
}
