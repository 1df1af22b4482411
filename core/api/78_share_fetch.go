package api

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share"
	"github.com/gregorbroker/gregor/core/share/coordinator"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ShareFetch v1-2 (KIP-932); v2 adds the record-limit acquire mode and
// renew acknowledgements (KIP-1222).
func init() { reg(78, 1, 2, (*Broker).handleShareFetch) }

// shareAcquireModeRecordLimit is ShareFetch v2's strict record limit.
const shareAcquireModeRecordLimit = 1

func (b *Broker) handleShareFetch(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ShareFetchRequest)
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	fail := func(code int16, msg string) protocol.Reply {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return protocol.Reply{Resp: resp}
	}
	if req.GroupID == nil || *req.GroupID == "" || req.MemberID == nil || *req.MemberID == "" {
		return fail(kerr.InvalidRequest.Code, "ShareFetch needs a group id and a member id")
	}
	groupID, member := *req.GroupID, *req.MemberID
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, groupID) {
		return fail(kerr.GroupAuthorizationFailed.Code, "")
	}
	acks := map[share.TopicPartition][]coordinator.Ack{}
	var add []share.TopicPartition
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := share.TopicPartition{TopicID: t.TopicID, Partition: p.Partition}
			add = append(add, tp)
			for _, ab := range p.AcknowledgementBatches {
				acks[tp] = append(acks[tp], toShareAck(ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes))
			}
		}
	}
	if req.ShareSessionEpoch == share.InitialEpoch && len(acks) > 0 {
		return fail(kerr.InvalidRequest.Code, "Acknowledge data present on initial fetch for a share session")
	}
	var forget []share.TopicPartition
	for _, f := range req.ForgottenTopicsData {
		for _, p := range f.Partitions {
			forget = append(forget, share.TopicPartition{TopicID: f.TopicID, Partition: p})
		}
	}
	st := b.share()
	var connID uint64
	if r.Conn != nil {
		connID = r.Conn.ID
	}
	parts, closed, err := st.Sessions().Update(share.SessionUpdate{Group: groupID, Member: member,
		Epoch: req.ShareSessionEpoch, Add: add, Forget: forget, Conn: connID})
	if err != nil {
		return fail(errCode(err), err.Error())
	}
	if req.ShareSessionEpoch == share.InitialEpoch && r.Conn != nil {
		b.releaseOnClose(r.Conn, groupID, member)
	}
	results := map[share.TopicPartition]*sharePartResult{}
	get := func(tp share.TopicPartition) *sharePartResult {
		if results[tp] == nil {
			results[tp] = &sharePartResult{leader: -1, epoch: -1}
		}
		return results[tp]
	}
	readAuth := b.topicAuth(r, sdkauth.OpRead)
	allowed := func(tp share.TopicPartition) bool {
		name, ok := st.TopicName(tp.TopicID)
		return !ok || readAuth.allowed(name)
	}
	for tp, as := range acks {
		res := get(tp)
		res.hasAcks = true
		if !allowed(tp) {
			res.ackCode = kerr.TopicAuthorizationFailed.Code
			continue
		}
		if err := st.Acknowledge(groupID, member, tp, as); err != nil {
			res.ackCode, res.ackMsg = shareErrCode(err), errMessage(err)
		}
	}
	if closed {
		// The final epoch: acknowledgements only, then the member's
		// records go back to the group.
		for _, tp := range add {
			get(tp)
		}
		for _, tp := range forget {
			delete(results, tp)
		}
		st.ReleaseMember(groupID, member)
		return protocol.Reply{Resp: b.shareFetchResponse(resp, results, st.LockMillis(groupID))}
	}
	for _, tp := range parts {
		res := get(tp)
		if !allowed(tp) {
			res.code = kerr.TopicAuthorizationFailed.Code
		}
	}
	fetch := !req.IsRenewAck && req.MaxBytes != 0
	maxRecords, strict := int(req.MaxRecords), r.Version >= 2 && req.ShareAcquireMode == shareAcquireModeRecordLimit
	if r.Version < 1 || maxRecords <= 0 {
		maxRecords = 500
	}
	fetchOnce := func() int {
		if !fetch {
			return 0
		}
		total, bytesLeft := 0, int(req.MaxBytes)
		if bytesLeft <= 0 {
			bytesLeft = 1<<31 - 1
		}
		for _, tp := range parts {
			res := get(tp)
			if res.code != 0 || total >= maxRecords || bytesLeft <= 0 {
				continue
			}
			got := st.Acquire(groupID, member, tp, maxRecords-total, strict, bytesLeft)
			res.code, res.leader, res.epoch = 0, got.Leader, got.Epoch
			if got.Err != nil {
				res.code = shareErrCode(got.Err)
			}
			res.records, res.acquired = got.Records, got.Acquired
			if name, ok := st.TopicName(tp.TopicID); ok && res.code == 0 {
				if code := b.interceptShareFetched(r, name, tp.Partition, &res.records); code != 0 {
					// Withheld: the records stay acquired until their lock
					// times out, then go to the next delivery.
					res.code, res.records, res.acquired = code, nil, nil
				}
			}
			for _, a := range got.Acquired {
				total += int(a.LastOffset - a.FirstOffset + 1)
			}
			bytesLeft -= len(got.Records)
		}
		return total
	}
	got := fetchOnce()
	wait := time.Duration(req.MaxWaitMillis) * time.Millisecond
	if wait > maxFetchWait {
		wait = maxFetchWait
	}
	if got > 0 || !fetch || wait <= 0 || len(parts) == 0 {
		return protocol.Reply{Resp: b.shareFetchResponse(resp, results, st.LockMillis(groupID))}
	}
	deadline := time.Now().Add(wait)
	return protocol.Reply{Later: func() kmsg.Response {
		for {
			until, chans := st.WaitUntil(groupID, parts)
			if fetchOnce() > 0 || !time.Now().Before(deadline) {
				break
			}
			d := time.Until(deadline)
			if !until.IsZero() {
				if u := until.Sub(b.now()); u < d {
					d = max(u, time.Millisecond)
				}
			}
			timer := time.NewTimer(d)
			waitAny(chans, timer.C, b.Done)
			timer.Stop()
			select {
			case <-b.Done:
				return b.shareFetchResponse(resp, results, st.LockMillis(groupID))
			default:
			}
		}
		return b.shareFetchResponse(resp, results, st.LockMillis(groupID))
	}}
}

// sharePartResult is what one partition of a ShareFetch answers.
type sharePartResult struct {
	code, ackCode int16
	ackMsg        *string
	leader, epoch int32
	records       []byte
	acquired      []share.AcquiredRange
	hasAcks       bool
}

func toShareAck(first, last int64, types []int8) coordinator.Ack {
	a := coordinator.Ack{First: first, Last: last}
	for _, t := range types {
		a.Types = append(a.Types, share.AckType(t))
	}
	return a
}

// shareFetchResponse lays the partition results out by topic.
func (b *Broker) shareFetchResponse(resp *kmsg.ShareFetchResponse, results map[share.TopicPartition]*sharePartResult, lockMillis int32) *kmsg.ShareFetchResponse {
	resp.AcquisitionLockTimeoutMillis = lockMillis
	byTopic := map[[16]byte]int{}
	for _, tp := range sortedTPs(results) {
		res := results[tp]
		i, ok := byTopic[tp.TopicID]
		if !ok {
			t := kmsg.NewShareFetchResponseTopic()
			t.TopicID = tp.TopicID
			resp.Topics = append(resp.Topics, t)
			i = len(resp.Topics) - 1
			byTopic[tp.TopicID] = i
		}
		sp := kmsg.NewShareFetchResponseTopicPartition()
		sp.Partition, sp.ErrorCode = tp.Partition, res.code
		sp.AcknowledgeErrorCode, sp.AcknowledgeErrorMessage = res.ackCode, res.ackMsg
		sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = res.leader, res.epoch
		sp.Records = res.records
		if sp.Records == nil {
			sp.Records = []byte{}
		}
		sp.AcquiredRecords = []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord{}
		for _, a := range res.acquired {
			sp.AcquiredRecords = append(sp.AcquiredRecords, kmsg.ShareFetchResponseTopicPartitionAcquiredRecord{
				FirstOffset: a.FirstOffset, LastOffset: a.LastOffset, DeliveryCount: a.DeliveryCount})
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, sp)
	}
	return resp
}

func sortedTPs(m map[share.TopicPartition]*sharePartResult) []share.TopicPartition {
	out := make([]share.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	coordinator.SortTopicPartitions(out)
	return out
}

// releaseOnClose releases what a member's share session holds when the
// connection that opened it closes, as Kafka does: its acquired records
// become available to the group at once instead of at lock expiry.
func (b *Broker) releaseOnClose(conn *protocol.ConnInfo, groupID, member string) {
	closed := conn.Closed()
	go func() {
		select {
		case <-closed:
		case <-b.Done:
			return
		}
		st := b.share()
		if st.Sessions().DropConn(groupID, member, conn.ID) {
			st.ReleaseMember(groupID, member)
		}
	}()
}
