package api

import (
	"errors"
	"time"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/fetchsession"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/protocol"
)

// Fetch v4 is Apache Kafka 4's minimum. Consumer fetches use incremental
// fetch sessions (core/fetchsession); follower fetches are sessionless.
func init() { reg(1, 4, 18, (*Broker).handleFetch) }

// maxFetchWait bounds a long poll whatever the client asks.
const maxFetchWait = 30 * time.Second

func (b *Broker) handleFetch(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.FetchRequest)
	if req.ReplicaID >= 0 || req.ReplicaState.ID >= 0 {
		return b.handleReplicaFetch(r, req)
	}
	sessions := b.fetchSessions()
	plan := sessions.Begin(r.Version, req, false)
	if plan.ErrCode != 0 {
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = plan.ErrCode
		return protocol.Reply{Resp: resp}
	}
	sp := b.fetchSplice(r)
	resp, bytes, waitable := b.fetchOnce(r, r.Version, req, plan.Parts, sp)
	wait := time.Duration(req.MaxWaitMillis) * time.Millisecond
	if wait > maxFetchWait {
		wait = maxFetchWait
	}
	if bytes >= int(req.MinBytes) || wait <= 0 || !waitable {
		return protocol.Reply{Resp: sessions.Finish(&plan, resp), Splice: sp}
	}
	deadline := time.Now().Add(wait)
	// The long poll reads again before it answers: no run of this read is
	// sent, and none is held while the fetch waits in the queue.
	sp.Reset()
	return protocol.Reply{Splice: sp, Later: func() kmsg.Response {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			chans := b.fetchWaitChans(r.Version, plan.Parts)
			// Re-read after taking the channels so that no append between the
			// first read and the wait is missed; the runs of the read before
			// are let go.
			sp.Reset()
			resp, bytes, waitable = b.fetchOnce(r, r.Version, req, plan.Parts, sp)
			if bytes >= int(req.MinBytes) || !waitable || !time.Now().Before(deadline) {
				return sessions.Finish(&plan, resp)
			}
			sp.Reset() // nothing held while waiting
			if !waitAny(chans, timer.C, b.Done) {
				sp.Reset()
				resp, _, _ = b.fetchOnce(r, r.Version, req, plan.Parts, sp)
				return sessions.Finish(&plan, resp)
			}
		}
	}}
}

// fetchSessions is the broker's session cache, made on first use.
func (b *Broker) fetchSessions() *fetchsession.Cache {
	b.sessOnce.Do(func() {
		b.sessions = fetchsession.New(int(b.Config.Limits.MaxIncrementalFetchSessionCacheSlots), b.Now)
	})
	return b.sessions
}

// waitAny blocks until one channel fires; false when the timer or shutdown did.
func waitAny(chans []<-chan struct{}, timer <-chan time.Time, done <-chan struct{}) bool {
	if len(chans) == 1 {
		select {
		case <-chans[0]:
			return true
		case <-timer:
			return false
		case <-done:
			return false
		}
	}
	fired := make(chan struct{}, 1)
	stop := make(chan struct{})
	defer close(stop)
	for _, c := range chans {
		go func(c <-chan struct{}) {
			select {
			case <-c:
				select {
				case fired <- struct{}{}:
				default:
				}
			case <-stop:
			}
		}(c)
	}
	select {
	case <-fired:
		return true
	case <-timer:
		return false
	case <-done:
		return false
	}
}

// fetchTopicName names a fetched topic: by name below v13, by id from v13.
func (b *Broker) fetchTopicName(version int16, k fetchKey) (string, bool) {
	if version < 13 {
		return k.Topic, true
	}
	tt, ok := b.Controller.Image().TopicsByID[uuid.UUID(k.TopicID)]
	if !ok {
		return "", false
	}
	return tt.Name, true
}

func (b *Broker) fetchWaitChans(version int16, parts []fetchsession.Part) []<-chan struct{} {
	var chans []<-chan struct{}
	for _, fp := range parts {
		name, ok := b.fetchTopicName(version, fp.Key)
		if !ok {
			continue
		}
		if p, ok := b.Partition(name, fp.Partition); ok {
			chans = append(chans, p.HighWatermarkChanged())
		}
	}
	return chans
}

// fetchSplice is where a consumer fetch's records go without copying: on a
// connection without TLS the records are sent from the segment files to the
// socket (sendfile); nil means they are read into the response.
func (b *Broker) fetchSplice(r *protocol.Request) *protocol.Splice {
	if r.Conn == nil || r.Conn.Security.UsesTLS() {
		return nil
	}
	return r.NewSplice(r.Version >= 12)
}

// fetchOnce reads parts once, each run of one topic's partitions answered as
// one response topic. It returns the response, the record bytes in it, and
// whether waiting could help (no partition failed). With splice, records
// are file runs taken into splice where the log can give them.
func (b *Broker) fetchOnce(r *protocol.Request, version int16, req *kmsg.FetchRequest, parts []fetchsession.Part, splice *protocol.Splice) (*kmsg.FetchResponse, int, bool) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	// The broker's fetch.max.bytes caps what the request asks; a request
	// asking for nothing (or below v3, for no limit) still gets the first
	// batch, as in Kafka.
	maxBytes := int(b.Config.Limits.FetchMaxBytes)
	if version >= 3 {
		maxBytes = max(0, min(maxBytes, int(req.MaxBytes)))
	}
	total := 0
	waitable := true
	first := true
	readAuth := b.topicAuth(r, sdkauth.OpRead)
	var st *kmsg.FetchResponseTopic
	var name string
	var known bool
	var ic *extension.Interceptor // the topic's fetch interceptor
	var icErr error
	for _, rp := range parts {
		if st == nil || st.Topic != rp.Topic || st.TopicID != rp.TopicID {
			resp.Topics = append(resp.Topics, kmsg.NewFetchResponseTopic())
			st = &resp.Topics[len(resp.Topics)-1]
			st.Topic, st.TopicID = rp.Topic, rp.TopicID
			name, known = b.fetchTopicName(version, rp.Key)
			if known {
				ic, icErr = b.fetchInterceptor(name)
			}
		}
		sp := kmsg.NewFetchResponseTopicPartition()
		sp.Partition = rp.Partition
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
		sp.PreferredReadReplica = -1
		// An empty record set, never a null one: librdkafka rejects null.
		sp.RecordBatches = []byte{}
		if req.IsolationLevel == 1 {
			sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
		}
		st.Partitions = append(st.Partitions, sp)
		spp := &st.Partitions[len(st.Partitions)-1]
		if !known {
			spp.ErrorCode = kerr.UnknownTopicID.Code
			waitable = false
			continue
		}
		if !readAuth.allowed(name) {
			spp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			waitable = false
			continue
		}
		p, ok := b.Partition(name, rp.Partition)
		if !ok {
			spp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			waitable = false
			continue
		}
		if leader, _ := p.Leadership(); leader != b.Config.NodeID {
			spp.ErrorCode = kerr.NotLeaderForPartition.Code
			waitable = false
			continue
		}
		if err := p.CheckEpoch(rp.LeaderEpoch); err != nil {
			spp.ErrorCode = errCode(err)
			waitable = false
			continue
		}
		if version >= 12 && rp.LastFetchedEpoch >= 0 {
			if epoch, end, diverged := divergence(p, rp.LastFetchedEpoch, rp.FetchOffset); diverged {
				off := p.Offsets()
				spp.HighWatermark, spp.LastStableOffset, spp.LogStartOffset = off.HighWatermark, off.LastStableOffset, off.LogStartOffset
				spp.DivergingEpoch.Epoch, spp.DivergingEpoch.EndOffset = epoch, end
				waitable = false
				continue
			}
		}
		limit := int(rp.MaxBytes)
		if left := maxBytes - total; left < limit {
			limit = left
		}
		if limit < 0 {
			limit = 0
		}
		if icErr != nil {
			spp.ErrorCode = b.fetchInterceptorMissing(name, rp.Partition, icErr)
			waitable = false
			continue
		}
		psplice := splice
		if ic != nil {
			psplice = nil // intercepted records are read, never spliced
		}
		res, err := readForFetch(p, rp.FetchOffset, limit, first, req.IsolationLevel == 1, psplice)
		if err == nil && ic != nil {
			var code int16
			if res.Records, code = b.interceptFetched(r, ic, name, rp.Partition, res.Records); code != 0 {
				spp.ErrorCode = code
				waitable = false
				continue
			}
			res.n = len(res.Records)
		}
		if err != nil {
			// Kafka leaves the offsets unknown (-1) on a failed read.
			spp.ErrorCode = errCode(err)
			if !errors.Is(err, partition.ErrOffsetOutOfRange) {
				b.Logger.Warn("fetch failed", "topic", name, "partition", rp.Partition, "err", err)
			}
			waitable = false
			continue
		}
		spp.HighWatermark, spp.LastStableOffset, spp.LogStartOffset = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
		for _, a := range res.Aborted {
			spp.AbortedTransactions = append(spp.AbortedTransactions,
				kmsg.FetchResponseTopicPartitionAbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
		}
		if res.n > 0 {
			spp.RecordBatches = res.Records
			total += res.n
			first = false
		}
	}
	return resp, total, waitable
}

// fetchRead is one partition's read for a fetch: Records holds the bytes,
// or a splice's marker for a run of the segment file; n is the record
// bytes either way.
type fetchRead struct {
	partition.ReadResult
	n int
}

// readForFetch reads up to the high watermark (the last stable offset when
// committed), as a file run taken into splice where the log can give one.
func readForFetch(p *partition.Partition, offset int64, limit int, first, committed bool, splice *protocol.Splice) (fetchRead, error) {
	if splice != nil {
		rr, ok, err := p.ReadRange(offset, limit, first, committed)
		if ok {
			res := fetchRead{ReadResult: partition.ReadResult{Offsets: rr.Offsets, Aborted: rr.Aborted}, n: rr.Range.Len}
			if fr := rr.Range; err == nil && fr.Len > 0 {
				res.Records = splice.Add(protocol.FileBytes{FD: fr.FD, Off: fr.Pos, Len: fr.Len, Release: fr.Close})
			}
			return res, err
		}
	}
	read := p.Read
	if committed {
		read = p.ReadCommitted
	}
	res, err := read(offset, limit, first)
	return fetchRead{ReadResult: res, n: len(res.Records)}, err
}

// fetchKey names a partition of a fetch request by topic name or id.
type fetchKey = fetchsession.Key

// divergence applies Kafka's check for a fetcher whose last fetched epoch
// ended before its fetch offset on this log: it must truncate to the
// returned epoch's end offset first.
func divergence(p *partition.Partition, lastEpoch int32, fetchOffset int64) (int32, int64, bool) {
	epoch, end := p.Log().EndOffsetForEpoch(lastEpoch)
	if epoch < 0 || end < 0 {
		return 0, 0, false
	}
	if end < fetchOffset || epoch < lastEpoch {
		return epoch, end, true
	}
	return 0, 0, false
}
