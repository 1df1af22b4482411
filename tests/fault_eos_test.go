package tests

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
	restarts int                 // sessions closed and created again with the same transactional id
	endErrs  map[string]int      // failed Begin/End by error
}

func newEOSWorkload(in, out, group string, members int) *eosWorkload {
	e := &eosWorkload{in: in, out: out, group: group, members: members, keys: 12,
		inAcked: map[string]recordAddress{}, outcome: map[string]string{}, values: map[string][]string{}, endErrs: map[string]int{}}
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
		tag := fmt.Sprintf("m%d.%d", i, n)
		var vals []string
		tctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		fs.EachRecord(func(r *kgo.Record) {
			vals = append(vals, string(r.Value))
			sess.Produce(tctx, &kgo.Record{Topic: e.out, Key: r.Key, Value: r.Value,
				Headers: []kgo.RecordHeader{{Key: "txn", Value: []byte(tag)}}}, nil)
		})
		committed, err := sess.End(tctx, kgo.TryCommit)
		cancel()
		outcome := "unknown"
		switch {
		case err == nil && committed:
			outcome = "commit"
			failures = 0
		case err == nil:
			outcome = "abort"
		default:
			e.fail(err)
			failures++
			abortOpen(sess)
		}
		e.mu.Lock()
		e.outcome[tag], e.values[tag] = outcome, vals
		e.mu.Unlock()
		if outcome == "commit" {
			e.commits[i].ack()
		}
	}
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

// txnState is the fate of one output offset by the log's own markers.
type txnState int

const (
	stateData    txnState = iota + 1 // non-transactional data
	stateCommit                      // transactional data followed by its COMMIT marker
	stateAbort                       // transactional data followed by its ABORT marker
	stateOpen                        // transactional data with no marker yet
	stateControl                     // a marker
)

// markerFates reads a partition's raw records (read_uncommitted, control
// records kept) in offset order and decides every offset by the markers
// of its producer.
func markerFates(raw []*kgo.Record) map[recordAddress]txnState {
	fate := map[recordAddress]txnState{}
	open := map[[2]int64][]recordAddress{} // partition, producer id -> undecided offsets
	for _, r := range raw {
		at := recordAddress{r.Partition, r.Offset}
		pid := [2]int64{int64(r.Partition), r.ProducerID}
		switch {
		case r.Attrs.IsControl():
			fate[at] = stateControl
			end := stateAbort
			if len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:]) == 1 {
				end = stateCommit
			}
			for _, o := range open[pid] {
				fate[o] = end
			}
			delete(open, pid)
		case r.Attrs.IsTransactional():
			fate[at] = stateOpen
			open[pid] = append(open[pid], at)
		default:
			fate[at] = stateData
		}
	}
	return fate
}

// finish stops nothing: the members must have stopped. It waits until no
// transaction of the output is open (LSO = high watermark, bounded), drains
// the input and the output (raw, and with read_committed) and checks.
func (e *eosWorkload) check(t *testing.T, ctx context.Context, adm *kadm.Client, seeds []string, stalled string) eosReport {
	t.Helper()
	rep := eosReport{Stalled: stalled}
	e.mu.Lock()
	rep.InAcked, rep.InFailed, rep.Restarts, rep.EndErrs = len(e.inAcked), e.inFailed, e.restarts, maps.Clone(e.endErrs)
	inAcked := maps.Clone(e.inAcked)
	outcome, values := maps.Clone(e.outcome), maps.Clone(e.values)
	e.mu.Unlock()
	for _, o := range outcome {
		switch o {
		case "commit":
			rep.Committed++
		case "abort":
			rep.Aborted++
		default:
			rep.Unknown++
		}
	}

	// A transaction left open by a dead coordinator is aborted by the
	// timeout (10s) within the coordinator's check interval.
	hw := listEnds(t, ctx, adm, e.out)
	var lso map[int32]int64
	deadline := time.Now().Add(45 * time.Second)
	for {
		lso = listStable(t, ctx, adm, e.out)
		hw = listEnds(t, ctx, adm, e.out)
		if maps.Equal(lso, hw) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond) // polling the last stable offset
	}

	inEnds := listEnds(t, ctx, adm, e.in)
	input, left, err := drainAll(ctx, seeds, e.in, lastOffsets(inEnds), 60*time.Second)
	if err != nil || len(left) > 0 {
		t.Fatalf("eos: draining %s: %v, partitions not at their end %v", e.in, err, left)
	}
	raw, left, err := drainAll(ctx, seeds, e.out, lastOffsets(hw), 60*time.Second, kgo.KeepControlRecords())
	if err != nil || len(left) > 0 {
		t.Fatalf("eos: draining %s raw: %v, partitions not at their end %v", e.out, err, left)
	}
	fate := markerFates(raw)
	// What read_committed must return: up to the last offset below the
	// LSO that is a marker or committed data.
	wantVisible := map[int32]int64{}
	for p := range hw {
		wantVisible[p] = -1
	}
	for at, f := range fate {
		if at.Offset < lso[at.Partition] && (f == stateControl || f == stateCommit || f == stateData) {
			wantVisible[at.Partition] = max(wantVisible[at.Partition], at.Offset)
		}
	}
	visible, left, err := drainAll(ctx, seeds, e.out, wantVisible, 30*time.Second,
		kgo.KeepControlRecords(), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatalf("eos: draining %s read_committed: %v", e.out, err)
	}
	for p, w := range left {
		rep.Invisible = append(rep.Invisible, fmt.Sprintf("p%d:read_committed-never-reached-%d", p, w))
	}
	for at, f := range fate {
		if f == stateOpen {
			rep.Hanging = append(rep.Hanging, fmt.Sprintf("p%d@%d", at.Partition, at.Offset))
		}
	}

	// The input in per-key order.
	inSeq := map[string]int{} // value -> its index in its key's input order
	keyOf := map[string]string{}
	perKey := map[string]int{}
	present := map[string]bool{}
	for _, r := range input {
		v := string(r.Value)
		inSeq[v] = perKey[string(r.Key)]
		perKey[string(r.Key)]++
		keyOf[v] = string(r.Key)
		present[v] = true
	}
	rep.InRead = len(input)
	for v := range inAcked {
		if !present[v] {
			rep.LostInput = append(rep.LostInput, v)
		}
	}

	seen := map[string]int{}
	seenAt := map[recordAddress]bool{}
	lastIdx := map[string]int{}
	for _, r := range visible {
		if r.Attrs.IsControl() {
			continue
		}
		at := recordAddress{r.Partition, r.Offset}
		seenAt[at] = true
		rep.OutRead++
		v := string(r.Value)
		tag := ""
		for _, h := range r.Headers {
			if h.Key == "txn" {
				tag = string(h.Value)
			}
		}
		if f := fate[at]; f == stateAbort || f == stateOpen {
			rep.AbortedRead = append(rep.AbortedRead, fmt.Sprintf("p%d@%d:%s(markers)", at.Partition, at.Offset, v))
		} else if outcome[tag] == "abort" {
			rep.AbortedRead = append(rep.AbortedRead, fmt.Sprintf("p%d@%d:%s(txn-%s-aborted)", at.Partition, at.Offset, v, tag))
		}
		if !present[v] {
			rep.Foreign = append(rep.Foreign, fmt.Sprintf("p%d@%d:%q", at.Partition, at.Offset, v))
			continue
		}
		seen[v]++
		if seen[v] > 1 {
			rep.Duplicated = append(rep.Duplicated, fmt.Sprintf("%s@p%d:%d", v, at.Partition, at.Offset))
			continue
		}
		k := keyOf[v]
		if last, ok := lastIdx[k]; ok && inSeq[v] < last {
			rep.OutOfOrder = append(rep.OutOfOrder, fmt.Sprintf("%s-after-input#%d", v, last))
		}
		lastIdx[k] = max(lastIdx[k], inSeq[v])
	}
	for at, f := range fate {
		if f == stateCommit && at.Offset < lso[at.Partition] && !seenAt[at] {
			rep.Invisible = append(rep.Invisible, fmt.Sprintf("p%d@%d", at.Partition, at.Offset))
		}
	}
	for v := range present {
		if seen[v] == 0 {
			rep.Missing = append(rep.Missing, v)
		}
	}
	for tag, o := range outcome {
		if o != "commit" {
			continue
		}
		for _, v := range values[tag] {
			if seen[v] == 0 {
				rep.CommittedLost = append(rep.CommittedLost, tag+":"+v)
			}
		}
	}
	return rep
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
func waitCommittedTo(ctx context.Context, adm *kadm.Client, group, topic string, ends map[int32]int64, limit time.Duration) string {
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
			return fmt.Sprintf("; STALLED: group %s committed only %s after %v (err %v)", group, strings.Join(behind, " "), limit, err)
		}
		time.Sleep(500 * time.Millisecond) // polling the group's progress
	}
}
