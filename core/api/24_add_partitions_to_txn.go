package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/txn"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// AddPartitionsToTxn v0-5: v0-3 are a producer's request for its one
// transaction; v4+ batch transactions and carry the broker verification of
// KIP-890 part 1 (verify_only).
func init() { reg(24, 0, 5, (*Broker).handleAddPartitionsToTxn) }

// addTxnPartitions adds (or verifies) one transaction's partitions and
// returns an error code per partition, by topic. Partitions of unknown or
// unwritable topics fail alone and the others get OPERATION_NOT_ATTEMPTED,
// as in Kafka.
func (b *Broker) addTxnPartitions(r *protocol.Request, id string, pid int64, epoch int16, verify bool,
	topics map[string][]int32, order []string) map[string]map[int32]int16 {
	codes := map[string]map[int32]int16{}
	set := func(topic string, p int32, code int16) {
		if codes[topic] == nil {
			codes[topic] = map[int32]int16{}
		}
		codes[topic][p] = code
	}
	all := func(code int16) {
		for _, t := range order {
			for _, p := range topics[t] {
				set(t, p, code)
			}
		}
	}
	// Versions before 4 come from clients and need WRITE on the transactional
	// id and the topics; v4+ comes from brokers, authorized as CLUSTER_ACTION.
	client := r.Version < 4
	if client && !b.authorize(r, sdkauth.OpWrite, sdkauth.ResourceTransactionalID, id) {
		all(kerr.TransactionalIDAuthorizationFailed.Code)
		return codes
	}
	im := b.Controller.Image()
	writeAuth := b.topicAuth(r, sdkauth.OpWrite)
	bad := false
	var tps []txn.TopicPartition
	for _, t := range order {
		tt, ok := im.Topic(t)
		for _, p := range topics[t] {
			switch {
			case client && (!writeAuth.allowed(t) || ok && tt.Internal):
				// Kafka never lets a client add an internal topic.
				set(t, p, kerr.TopicAuthorizationFailed.Code)
				bad = true
			case !ok || p < 0 || int(p) >= len(tt.Partitions):
				set(t, p, kerr.UnknownTopicOrPartition.Code)
				bad = true
			default:
				tps = append(tps, txn.TopicPartition{Topic: t, Partition: p})
			}
		}
	}
	if bad {
		for _, tp := range tps {
			set(tp.Topic, tp.Partition, kerr.OperationNotAttempted.Code)
		}
		return codes
	}
	if b.Txns == nil {
		all(kerr.CoordinatorNotAvailable.Code)
		return codes
	}
	req := txn.AddPartitionsRequest{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Partitions: tps}
	if verify {
		errs, err := b.Txns.Verify(req)
		if err != nil {
			all(b.txnCode(err, r.Version, 2))
			return codes
		}
		for i, tp := range tps {
			set(tp.Topic, tp.Partition, errCode(txn.AbortableFor(errs[i], true)))
		}
		return codes
	}
	if !client {
		// A partition leader adds partitions only for a producer of
		// transaction version 2 (Produce v12+, KIP-890 part 2).
		req.TransactionVersion = 2
	}
	all(b.txnCode(b.Txns.AddPartitions(req), r.Version, 2))
	return codes
}

func (b *Broker) handleAddPartitionsToTxn(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if r.Version < 4 {
		topics, order := map[string][]int32{}, []string(nil)
		for _, t := range req.Topics {
			if _, ok := topics[t.Topic]; !ok {
				order = append(order, t.Topic)
			}
			topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
		}
		codes := b.addTxnPartitions(r, req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, topics, order)
		for _, t := range order {
			st := kmsg.NewAddPartitionsToTxnResponseTopic()
			st.Topic = t
			for _, p := range topics[t] {
				sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p, codes[t][p]
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return protocol.Reply{Resp: resp}
	}
	// The batched form is sent by brokers: CLUSTER_ACTION is needed.
	if !b.authorizeCluster(r, sdkauth.OpClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	for _, rt := range req.Transactions {
		topics, order := map[string][]int32{}, []string(nil)
		for _, t := range rt.Topics {
			if _, ok := topics[t.Topic]; !ok {
				order = append(order, t.Topic)
			}
			topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
		}
		codes := b.addTxnPartitions(r, rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.VerifyOnly, topics, order)
		st := kmsg.NewAddPartitionsToTxnResponseTransaction()
		st.TransactionalID = rt.TransactionalID
		for _, t := range order {
			tt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			tt.Topic = t
			for _, p := range topics[t] {
				sp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				sp.Partition, sp.ErrorCode = p, codes[t][p]
				tt.Partitions = append(tt.Partitions, sp)
			}
			st.Topics = append(st.Topics, tt)
		}
		resp.Transactions = append(resp.Transactions, st)
	}
	return protocol.Reply{Resp: resp}
}
