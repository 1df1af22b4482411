package tests

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// eosWorkload is the exactly-once workload of the fault suite: an
// idempotent acks=all producer writes keyed input records (a per-key
// sequence in the value), and several members of one group, each a franz-go
// GroupTransactSession with its own transactional id, copy the input topic
// to the output topic in consume-transform-produce transactions. Every
// output record carries the tag of the transaction that wrote it, so that
// the checker can hold what the members were told (committed, aborted,
// unknown) against what a read_committed reader sees.
type eosWorkload struct {
	in, out, group string
	members        int
	keys           int
	commits        []*ackSignal // per member: transactions acknowledged committed

	mu       sync.Mutex // guards everything below
	inAcked  map[string]recordAddress
	inFailed int
	outcome  map[string]string   // transaction tag -> "commit", "abort" or "unknown"
	values   map[string][]string // transaction tag -> the values it produced
	outAcked map[string]string   // "tag:value" -> where its produce was acknowledged ("acked p1@3220") or its error
	restarts int                 // sessions closed and created again with the same transactional id
	endErrs  map[string]int      // failed Begin/End by error
}

func newEOSWorkload(in, out, group string, members int) *eosWorkload {
	e := &eosWorkload{in: in, out: out, group: group, members: members, keys: 12,
		inAcked: map[string]recordAddress{}, outcome: map[string]string{}, values: map[string][]string{}, outAcked: map[string]string{}, endErrs: map[string]int{}}
	for range members {
		e.commits = append(e.commits, newAckSignal())
	}
	return e
}

// txnID is the transactional id of member i.
func (e *eosWorkload) txnID(i int) string { return fmt.Sprintf("%s-%d", e.group, i) }

// produceInput writes about 200 records a second, round-robin over the
// keys, until ctx is done, then flushes (bounded by flushCtx).
func (e *eosWorkload) produceInput(ctx, flushCtx context.Context, cl *kgo.Client) {
	seq := make([]int, e.keys)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for k := 0; ; {
		select {
		case <-ctx.Done():
			_ = cl.Flush(flushCtx)
			return
		case <-tick.C:
		}
		for range 4 {
			key := fmt.Sprintf("k%02d", k)
			v := fmt.Sprintf("%s-%07d", key, seq[k])
			seq[k]++
			k = (k + 1) % e.keys
			cl.Produce(flushCtx, &kgo.Record{Topic: e.in, Key: []byte(key), Value: []byte(v)}, func(r *kgo.Record, err error) {
				e.mu.Lock()
				defer e.mu.Unlock()
				if err != nil {
					e.inFailed++
					return
				}
				e.inAcked[v] = recordAddress{r.Partition, r.Offset}
			})
		}
	}
}

func (e *eosWorkload) session(seeds []string, i int) (*kgo.GroupTransactSession, error) {
	return kgo.NewGroupTransactSession(
		kgo.SeedBrokers(seeds...),
		kgo.TransactionalID(e.txnID(i)),
		kgo.TransactionTimeout(10*time.Second),
		kgo.ConsumerGroup(e.group),
		kgo.ConsumeTopics(e.in),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(6*time.Second),
		kgo.HeartbeatInterval(500*time.Millisecond),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.MetadataMinAge(250*time.Millisecond),
	)
}

// member runs member i until ctx is done. After three failures in a row
// the session is closed and created again with the same transactional id,
// as an application would restart.
func (e *eosWorkload) member(ctx context.Context, seeds []string, i int) {
	sess, err := e.session(seeds, i)
	if err != nil {
		e.fail(err)
		return
	}
	defer func() { sess.Close() }()
	failures := 0
	for n := 0; ctx.Err() == nil; n++ {
		if failures >= 3 {
			sess.Close()
			if sess, err = e.session(seeds, i); err != nil {
				e.fail(err)
				return
			}
			e.mu.Lock()
			e.restarts++
			e.mu.Unlock()
			failures = 0
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := sess.PollRecords(pctx, 200)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			e.fail(err)
			failures++
			abortOpen(sess)
			continue
		}
		outcome, err := e.copyTxn(sess, fs, fmt.Sprintf("m%d.%d", i, n))
		switch {
		case outcome == "commit":
			failures = 0
		case err != nil:
			e.fail(err)
			failures++
			abortOpen(sess)
		}
		if outcome == "commit" {
			e.commits[i].ack()
		}
	}
}

// copyTxn copies the polled records to the output in the transaction begun
// on sess, tagged tag, ends it and records what the member was told:
// "commit", "abort" or "unknown" (err is End's error). A transaction with a
// failed produce is aborted, as Java's producer refuses to commit after a
// failed send: franz-go commits whatever succeeded, and would commit the
// input offsets of records that never reached the output.
func (e *eosWorkload) copyTxn(sess *kgo.GroupTransactSession, fs kgo.Fetches, tag string) (outcome string, err error) {
	var vals []string
	var failed atomic.Int64
	tctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs.EachRecord(func(r *kgo.Record) {
		vals = append(vals, string(r.Value))
		sess.Produce(tctx, &kgo.Record{Topic: e.out, Key: r.Key, Value: r.Value,
			Headers: []kgo.RecordHeader{{Key: "txn", Value: []byte(tag)}}}, func(r *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
			}
			e.noteOutAck(r, err)
		})
	})
	end := kgo.TryCommit
	if err := sess.Client().Flush(tctx); err != nil || failed.Load() > 0 {
		end = kgo.TryAbort
	}
	committed, err := sess.End(tctx, end)
	outcome = "unknown"
	switch {
	case err == nil && committed:
		outcome = "commit"
	case err == nil:
		outcome = "abort"
	}
	e.mu.Lock()
	e.outcome[tag], e.values[tag] = outcome, vals
	e.mu.Unlock()
	return outcome, err
}

// noteOutAck records where an output record's produce was acknowledged,
// so that a committed record missing from the log can be placed.
func (e *eosWorkload) noteOutAck(r *kgo.Record, err error) {
	at := fmt.Sprintf("acked p%d@%d", r.Partition, r.Offset)
	if err != nil {
		at = "failed: " + shortErr(err)
	}
	e.mu.Lock()
	tag := ""
	for _, h := range r.Headers {
		if h.Key == "txn" {
			tag = string(h.Value)
		}
	}
	e.outAcked[tag+":"+string(r.Value)] = at
	e.mu.Unlock()
}

func (e *eosWorkload) fail(err error) {
	e.mu.Lock()
	e.endErrs[shortErr(err)]++
	e.mu.Unlock()
}

// committed counts the transactions acknowledged committed.
func (e *eosWorkload) committed() int {
	n := 0
	for _, s := range e.commits {
		n += s.count()
	}
	return n
}

// eosReport is what the exactly-once checker found; every list must be empty.
type eosReport struct {
	InAcked, InFailed, InRead, OutRead    int
	Committed, Aborted, Unknown, Restarts int
	EndErrs                               map[string]int
	LostInput                             []string // acknowledged input records not in the input topic
	Missing                               []string // input records never visible in the output (lost write)
	Duplicated                            []string // input records visible more than once in the output
	OutOfOrder                            []string // a key's records visible in another order than the input's
	AbortedRead                           []string // visible records of an aborted transaction
	CommittedLost                         []string // records of a transaction acknowledged committed, not visible
	Hanging                               []string // transactions still open in the output at the end
	Invisible                             []string // committed records below the LSO that read_committed did not return
	Foreign                               []string // visible values that are no input record
	Stalled                               string   // the copy did not reach the end of the input
}

func (r eosReport) ok() bool {
	return len(r.LostInput)+len(r.Missing)+len(r.Duplicated)+len(r.OutOfOrder)+len(r.AbortedRead)+
		len(r.CommittedLost)+len(r.Hanging)+len(r.Invisible)+len(r.Foreign) == 0
}

func (r eosReport) String() string {
	return fmt.Sprintf("eos: input acked %d (failed %d, read %d), output visible %d, transactions committed %d aborted %d unknown %d, session restarts %d, errors %v%s; "+
		"lost input %d [%s], missing %d [%s], duplicated %d [%s], out of order %d [%s], aborted read %d [%s], committed lost %d [%s], hanging %d [%s], invisible %d [%s], foreign %d [%s]",
		r.InAcked, r.InFailed, r.InRead, r.OutRead, r.Committed, r.Aborted, r.Unknown, r.Restarts, r.EndErrs, r.Stalled,
		len(r.LostInput), firstN(r.LostInput), len(r.Missing), firstN(r.Missing), len(r.Duplicated), firstN(r.Duplicated),
		len(r.OutOfOrder), firstN(r.OutOfOrder), len(r.AbortedRead), firstN(r.AbortedRead), len(r.CommittedLost), firstN(r.CommittedLost),
		len(r.Hanging), firstN(r.Hanging), len(r.Invisible), firstN(r.Invisible), len(r.Foreign), firstN(r.Foreign))
}

// drainAll reads topic from the start until every partition has returned
// the offset want[p] (partitions with want < 0 are skipped), or limit
// passes; it returns the records and the partitions not reached.
func drainAll(ctx context.Context, seeds []string, topic string, want map[int32]int64, limit time.Duration, opts ...kgo.Opt) ([]*kgo.Record, map[int32]int64, error) {
	parts := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	for p, w := range want {
		if w >= 0 {
			parts[p] = kgo.NewOffset().AtStart()
			left[p] = w
		}
	}
	if len(parts) == 0 {
		return nil, nil, nil
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts})}, opts...)...)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	dctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var got []*kgo.Record
	for len(left) > 0 && dctx.Err() == nil {
		fs := cl.PollFetches(dctx)
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, r)
			if w, ok := left[r.Partition]; ok && r.Offset >= w {
				delete(left, r.Partition)
			}
		})
	}
	return got, left, nil
}

// lastOffsets maps end offsets to the last offset of each partition (-1
// when a partition is empty).
func lastOffsets(ends map[int32]int64) map[int32]int64 {
	out := map[int32]int64{}
	for p, e := range ends {
		out[p] = e - 1
	}
	return out
}

// listStable lists the last stable offsets (read_committed ends) of topic.
func listStable(t testing.TB, ctx context.Context, adm *kadm.Client, topic string) map[int32]int64 {
	t.Helper()
	listed, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		t.Fatalf("list last stable offsets of %s: %v", topic, err)
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// groupCommitted fetches a group's committed offsets of topic.
func groupCommitted(ctx context.Context, adm *kadm.Client, group, topic string) (map[int32]int64, error) {
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got, err := adm.FetchOffsets(fctx, group)
	if err == nil {
		err = got.Error()
	}
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	got.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil {
			out[o.Partition] = o.At
		}
	})
	return out, nil
}

// waitCommittedTo polls a group's offsets until they reach ends; it
// returns "" or what was still behind.
func waitCommittedTo(ctx context.Context, adm *kadm.Client, seeds []string, group, topic string, ends map[int32]int64, limit time.Duration) string {
	deadline := time.Now().Add(limit)
	for {
		got, err := groupCommitted(ctx, adm, group, topic)
		var behind []string
		for _, p := range slices.Sorted(maps.Keys(ends)) {
			if ends[p] > 0 && got[p] < ends[p] {
				behind = append(behind, fmt.Sprintf("p%d:%d/%d", p, got[p], ends[p]))
			}
		}
		if err == nil && len(behind) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("; STALLED: group %s committed only %s after %v (err %v; OffsetFetch with RequireStable: %s)",
				group, strings.Join(behind, " "), limit, err, stableFetch(ctx, seeds, group, topic))
		}
		time.Sleep(500 * time.Millisecond) // polling the group's progress
	}
}

// stableFetch says what an OffsetFetch with RequireStable (what a
// transactional consumer sends before it consumes) answers for topic: the
// error of each partition, or the request's.
func stableFetch(ctx context.Context, seeds []string, group, topic string) string {
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group, req.RequireStable = group, true
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic = topic
	for p := range int32(eosPartitions) {
		rt.Partitions = append(rt.Partitions, p)
	}
	req.Topics = append(req.Topics, rt)
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return err.Error()
	}
	defer cl.Close()
	shards := cl.RequestSharded(fctx, req)
	var out []string
	for _, sh := range shards {
		if sh.Err != nil {
			out = append(out, sh.Err.Error())
			continue
		}
		resp := sh.Resp.(*kmsg.OffsetFetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			out = append(out, err.Error())
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				e := "ok"
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					e = err.(*kerr.Error).Message
				}
				out = append(out, fmt.Sprintf("p%d:%d:%s", p.Partition, p.Offset, e))
			}
		}
	}
	return strings.Join(out, " ")
}
