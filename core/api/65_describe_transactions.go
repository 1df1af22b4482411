package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(65, 0, 0, (*Broker).handleDescribeTransactions) }

func (b *Broker) handleDescribeTransactions(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.ProducerEpoch, st.StartTimestamp = id, -1, -1, -1
		switch {
		case !b.authorize(r, sdkauth.OpDescribe, sdkauth.ResourceTransactionalID, id):
			st.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		case b.Txns == nil:
			st.ErrorCode = kerr.CoordinatorNotAvailable.Code
		default:
			d, err := b.Txns.Describe(id)
			if err != nil {
				st.ErrorCode = errCode(err)
				break
			}
			st.State, st.TimeoutMillis, st.StartTimestamp = d.State.String(), d.TimeoutMs, d.StartMs
			st.ProducerID, st.ProducerEpoch = d.ProducerID, d.ProducerEpoch
			// As in Kafka, only the topics the principal may DESCRIBE are shown.
			descAuth := b.topicAuth(r, sdkauth.OpDescribe)
			for _, tp := range d.Partitions {
				if !descAuth.allowed(tp.Topic) {
					continue
				}
				if n := len(st.Topics); n == 0 || st.Topics[n-1].Topic != tp.Topic {
					t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					t.Topic = tp.Topic
					st.Topics = append(st.Topics, t)
				}
				t := &st.Topics[len(st.Topics)-1]
				t.Partitions = append(t.Partitions, tp.Partition)
			}
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return protocol.Reply{Resp: resp}
}
