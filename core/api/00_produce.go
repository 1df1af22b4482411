package api

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// Produce v0-v2 stay advertised, as Apache Kafka 4 does, because librdkafka
// turns compression off when the minimum is above 0; their message-set
// formats are refused per partition.
func init() { reg(0, 0, 13, (*Broker).handleProduce) }

func (b *Broker) handleProduce(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	acks := req.Acks
	badAcks := acks != 0 && acks != 1 && acks != -1
	im := b.Controller.Image()
	var synced []*partition.Partition
	var waits []ackWait
	writeAuth := b.topicAuth(r, sdkauth.OpWrite)
	// A mirror link appends under a reserved transactional id, with ALTER
	// on the topic in place of WRITE.
	link, isLink := broker.ProduceLink(req.TransactionID)
	alterAuth := b.topicAuth(r, sdkauth.OpAlter)
	txnAuth := isLink || req.TransactionID == nil && !broker.HasTransactionalRecords(req) ||
		req.TransactionID != nil && b.authorize(r, sdkauth.OpWrite, sdkauth.ResourceTransactionalID, *req.TransactionID)
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name := rt.Topic
		if r.Version >= 13 {
			if t, ok := im.TopicsByID[uuid.UUID(rt.TopicID)]; ok {
				name = t.Name
			} else {
				name = ""
			}
		}
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			fail := func(code int16, err error) {
				sp.ErrorCode = code
				if err != nil {
					sp.ErrorMessage = errMessage(err)
				}
			}
			switch {
			case badAcks:
				fail(kerr.InvalidRequiredAcks.Code, nil)
			case !txnAuth:
				fail(kerr.TransactionalIDAuthorizationFailed.Code, nil)
			case name == "" && r.Version >= 13:
				fail(kerr.UnknownTopicID.Code, nil)
			case isInternal(im, name) && r.ClientID != adminClientID:
				// As Kafka: only the broker's own writers (and its admin
				// client id) may append to internal topics.
				fail(kerr.InvalidTopicException.Code, fmt.Errorf("topic %q is internal", name))
			case !isLink && !writeAuth.allowed(name), isLink && !alterAuth.allowed(name):
				fail(kerr.TopicAuthorizationFailed.Code, nil)
			default:
				p, ok := b.Partition(name, rp.Partition)
				if !ok {
					fail(kerr.UnknownTopicOrPartition.Code, nil)
					break
				}
				// The epoch the request is admitted in: the append checks it
				// again under the partition's lock.
				epoch, err := b.Admit(p)
				if err != nil {
					fail(kerr.NotLeaderForPartition.Code, err)
					break
				}
				if code, err := broker.CheckMirrorLink(im, name, link, isLink); code != 0 {
					fail(code, err)
					break
				}
				checked, code, err := b.checkProduceRecords(r, im, p, name, &rp, &sp, isLink)
				if code != 0 {
					fail(code, err)
					break
				}
				if req.TransactionID != nil && !isLink {
					if err := b.VerifyTxnProduce(r.Version, *req.TransactionID, p, rp.Records); err != nil {
						fail(produceTxnCode(err), err)
						break
					}
				}
				var res partition.AppendResult
				switch {
				case isLink:
					res, err = p.AppendAtInEpoch(epoch, rp.Records, acks == -1) // at the source's offsets
				case checked.IsZero():
					// Validated outside the partition's lock; only the
					// append takes it.
					if checked, err = p.Check(rp.Records, nil, 0); err != nil {
						break
					}
					fallthrough
				default:
					res, err = p.AppendCheckedInEpoch(epoch, checked, acks == -1)
				}
				if err != nil {
					code := errCode(err)
					if r.Version >= 3 && errors.Is(err, partition.ErrUnsupportedForMagic) {
						// Kafka: Produce v3+ may only carry magic v2 batches.
						code = kerr.InvalidRecord.Code
					}
					fail(code, err)
					b.Logger.Debug("produce rejected", "topic", name, "partition", rp.Partition, "err", err)
					break
				}
				sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = res.BaseOffset, res.LogAppendTime, res.LogStartOffset
				if !res.Duplicate {
					synced = append(synced, p)
				}
				if acks == -1 {
					waits = append(waits, ackWait{AckWait: broker.AckWait{Partition: p, Epoch: epoch, Offset: res.LastOffset + 1},
						topic: len(resp.Topics), part: len(st.Partitions)})
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if acks == 0 {
		// No answer is sent; as in Kafka, a failed acks=0 produce closes
		// the connection so that the client notices and refreshes metadata.
		return protocol.Reply{None: true, Close: anyProduceError(resp)}
	}
	if acks == -1 {
		// acks=all waits for the ISR to hold the batches (at once for a
		// lone replica) and, on fsync durability, for the disk.
		waits = settleAcks(resp, waits)
	}
	fsync := acks == -1 && b.Config.Log.Durability == config.DurabilityFsync && len(synced) > 0
	if fsync || len(waits) > 0 {
		// Concurrent producers share each fsync (group commit).
		return protocol.Reply{Later: func() kmsg.Response {
			if fsync {
				for _, p := range synced {
					if err := p.Sync(); err != nil {
						b.Logger.Error("fsync failed", "topic", p.Topic, "partition", p.Index, "err", err)
						markStorageError(resp, p)
					}
				}
			}
			b.awaitAcks(resp, waits, req.TimeoutMillis)
			return resp
		}}
	}
	return protocol.Reply{Resp: resp}
}

// markStorageError turns a partition's answer into KAFKA_STORAGE_ERROR when
// its data could not be made durable.
func markStorageError(resp *kmsg.ProduceResponse, p *partition.Partition) {
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			sp := &t.Partitions[j]
			if sp.Partition == p.Index && sp.ErrorCode == 0 && (t.Topic == p.Topic || t.TopicID == p.TopicID) {
				sp.ErrorCode = kerr.KafkaStorageError.Code
				sp.BaseOffset = -1
			}
		}
	}
}

func anyProduceError(resp *kmsg.ProduceResponse) bool {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return true
			}
		}
	}
	return false
}

// adminClientID is the client id Kafka lets write to internal topics.
const adminClientID = "__admin_client"

func isInternal(im *controller.Image, topic string) bool {
	t, ok := im.Topic(topic)
	return ok && t.Internal
}
